module github.com/crlbatch/crlbatch

go 1.26.0

require (
	github.com/apache/arrow-go/v18 v18.8.0 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/urfave/cli/v3 v3.14.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	gocloud.dev v0.48.2 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
