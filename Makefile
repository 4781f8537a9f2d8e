# crlbatch — developer targets. `make test` is the test command CI runs.
GO       ?= go
PKGS     := ./...
FUZZTIME ?= 60s

.PHONY: all build test test-short lint bench fuzz fuzz-smoke deps example clean

all: lint test

build:
	$(GO) build -o bin/crlbatch ./cmd/crlbatch

# The whole suite: unit tests, end-to-end tests of the command, spec examples.
test:
	$(GO) test -count=1 $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Micro-benchmarks, six times each so that benchstat can compare two runs.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 $(PKGS)

# Every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

fuzz-smoke:
	$(MAKE) fuzz FUZZTIME=5s

deps:
	$(GO) mod tidy && $(GO) mod verify

# Score the bundled example sweep into results/example.
example:
	$(GO) run ./cmd/crlbatch score configs/example-sweep --out results/example --overwrite

clean:
	rm -rf bin results
