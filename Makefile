# crlbatch — developer targets. `make test` is the test command CI runs.
GO       ?= go
PKGS     := ./...
FUZZTIME ?= 60s
# Fuzzing runs on Go 1.27.3, fetched from the module proxy on first use
# (about 76 MB). Go 1.26's fuzz coordinator can fail a target with a bare
# "context deadline exceeded" when -fuzztime runs out while a worker is
# mid-input (go.dev/issue/75804, fixed in 1.27); the rest of the project
# builds and tests on the machine's Go 1.26.
FUZZGO   ?= GOTOOLCHAIN=go1.27.3 $(GO)
# Build tags of every go command run from here (exported as GOFLAGS, so the
# tests, vet and the integration tests' own `go build` see them too).
# disable_grpc_modules is cloud.google.com/go/storage's documented opt-out of
# its gRPC DirectPath modules (the xDS resolver, the RLS balancer and the
# envoy protos, pulled in by gocloud.dev/blob/gcsblob; gcsblob speaks the
# JSON API unless a gs:// URL asks for grpc=true): 147 fewer packages, a
# binary 20 MB smaller, 7-8 MiB less resident at start-up (issue 16,
# docs/decisions.md "Start-up"). Not for gs:// URLs with grpc=true on a
# Google Cloud VM, where the gRPC client asks for DirectPath's resolver:
# `make build BUILDTAGS=` builds with it.
# On Linux also netgo and osusergo: the pure-Go DNS resolver (already Go's
# choice on Linux unless nsswitch.conf names a source only libc knows, such
# as mdns or ldap) and /etc/passwd for os/user (which only the cloud SDKs
# call, for a home directory, after $HOME). Nothing else uses cgo, so the
# binary is statically linked: no dynamic loader, no libc mapped and
# relocated before main, 4-9 ms less for every job on the benchmark
# machine (docs/decisions.md, "A statically linked binary"). On a host whose
# names only libc resolves, `make build BUILDTAGS=disable_grpc_modules`.
ifeq ($(shell uname -s),Linux)
BUILDTAGS ?= disable_grpc_modules,netgo,osusergo
else
BUILDTAGS ?= disable_grpc_modules
endif
export GOFLAGS := $(strip $(GOFLAGS) $(if $(BUILDTAGS),-tags=$(BUILDTAGS)))

.PHONY: all build print-buildtags test test-beam build-beam test-short lint check-docs check-references bench bench-sweep fuzz fuzz-smoke deps example clean

all: lint test

build:
	$(GO) build -o bin/crlbatch ./cmd/crlbatch

# The build tags above, for the benchmark scripts (bench/buildtags.sh).
print-buildtags:
	@echo '$(BUILDTAGS)'

# The whole suite under the race detector: unit tests, end-to-end tests of
# the command, the corpus, and the integration tests against real S3, GCS
# and Azure servers and DuckDB (skipped with a message until
# .ci/install-services has installed them; CI requires them).
# -timeout is a guard against a hang, not a speed check: cmd/crlbatch took
# 12 minutes under -race in a quiet CI run of round 29 (16 before
# internal/pqzstd, 30 on a machine loaded by other jobs in round 25, past 40
# in round 27 beside five engineers' tests); 60 stays inside CI's 90 with
# the set-up of a cold machine (~20) and test-beam and the fuzzing smoke
# (~10) around it.
test:
	$(GO) test -race -count=1 -timeout 60m $(PKGS)
	$(MAKE) test-norace
	$(MAKE) test-beam

# The tests that skip, or check less, under the race detector (its shadow
# memory and slowdown move allocation counts, sync.Pool and latency), run
# whole without it: every test that reads raceEnabled. About 40 s.
NORACE_TESTS := TestInputKeyDrawsEqualBytes|TestConvertObjectMemory|TestConvertSpilledMemory|TestPNGCanvasConcurrent|TestPNGCanvasMatchesVgimg|TestPNGCanvasReusedMemory|TestSameBytesAsArrow|TestCancelEndsOutputAt100000Labels|TestAppendRowsMatchesAdd|TestAddTraceMatchesAdd|TestDecodeParquetBulk|TestDecodeParquetDirectPages|TestIdleParquetMemory|TestLineBuffersArePooled|TestZstdDecodersArePooled|TestHTMLWideTableMemory|TestMarkdownTableWideMemory
.PHONY: test-norace
test-norace:
	$(GO) test -count=1 -timeout 20m -run '^($(NORACE_TESTS))$$' ./figures ./internal/pqzstd ./pipeline ./protocol/skyfall ./readers ./writers

# crlbatch-beam (issue 17), its own module under beam/ (Apache Beam's Go
# SDK and its ~120 modules stay out of the main binary): on Prism in this
# process, every golden case, a split sweep in listing and reverse order,
# bad rows, and once through Beam's standalone Prism job server on a
# loopback port. The cold build of the module takes minutes.
test-beam:
	cd beam && $(GO) test -race -count=1 -timeout 20m ./...
	# failed pipelines, without -race (Beam's own harness race: beam/failed_test.go):
	# every test of the files built with !race (exitstatus, failed, internal, secrets)
	cd beam && $(GO) test -count=1 -timeout 10m -run '^(TestCommandExitStatus|TestBadRow|TestMaxBadRowsExceeded|TestCommandBadRow|TestFirstFailureInKeyOrder|TestCommandInternalError|TestIsInternal|TestCommandNoSecret)$$' .

build-beam:
	cd beam && $(GO) build -o ../bin/crlbatch-beam ./cmd/crlbatch-beam

test-short:
	$(GO) test -short $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd beam && $(GO) vet ./...
	@$(MAKE) --no-print-directory check-docs
	@$(MAKE) --no-print-directory check-norace

# Every test that reads raceEnabled is in NORACE_TESTS (make test-norace).
.PHONY: check-norace
check-norace:
	@missing=$$(awk 'FNR == 1 {n = ""} /^func / {n = ""} /^func Test/ {n = $$2; sub(/\(.*/, "", n)} /^[^\/]*raceEnabled/ && n != "" {print n}' $$(git ls-files '*_test.go') | sort -u | grep -vxE '$(NORACE_TESTS)' || true); \
	  if [ -n "$$missing" ]; then echo "tests that read raceEnabled, missing from NORACE_TESTS in the Makefile:" $$missing; exit 1; fi

# docs/performance.md and docs/performance-history.md: no line of the page before
# their split lost, headings unique, every reference to a section (a link's anchor,
# a quoted title after the file's name) resolving. Python 3 and git only; about
# 0.5 CPU-s.
check-docs:
	@$(REFPY) bench/doclines.py

# The independent Python references stay honest (issue 11; CI runs this): each
# protocol/*/testdata/reference.py recomputes its cases with --check and must
# reproduce the committed JSON, and configs/examples/make_examples.py, run on a
# copy, must write the committed examples. Debian's /usr/bin/python3 with
# python3-scipy, python3-numpy and python3-mpmath (.ci/install-python installs
# them); a missing module fails the target, it never skips. The edge references
# share protocol/testdata/refcheck.py (write, or --check), which each finds from
# its own folder, so they run from any working folder.
REFPY ?= /usr/bin/python3
check-references:
	@$(REFPY) -c 'import scipy, numpy, mpmath' || { echo "check-references: $(REFPY) cannot import scipy, numpy and mpmath; run .ci/install-python (apt-get install python3-scipy python3-numpy python3-mpmath)" >&2; exit 1; }
	@set -e; for f in protocol/*/testdata/*reference.py upperbound/testdata/*reference.py figures/testdata/*reference.py; do \
	  grep -q -e '--check' "$$f" || { echo "check-references: $$f has no --check mode" >&2; exit 1; }; \
	  echo "== $$f --check"; $(REFPY) "$$f" --check; done
	@set -e; echo "== configs/examples/make_examples.py (on a copy)"; dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	  cp configs/examples/make_examples.py "$$dir/"; $(REFPY) "$$dir/make_examples.py"; rm "$$dir/make_examples.py"; \
	  n=0; for f in $$(cd "$$dir" && find . -type f | sort); do n=$$((n+1)); \
	    cmp -s "$$dir/$$f" "configs/examples/$$f" || { echo "check-references: configs/examples/$${f#./} is not what make_examples.py writes" >&2; exit 1; }; done; \
	  [ $$n -gt 0 ] || { echo "check-references: make_examples.py wrote nothing" >&2; exit 1; }; echo "ok: $$n example files"

# Micro-benchmarks, six times each so that benchstat can compare two runs.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 $(PKGS)

# End to end on a synthetic sweep of SWEEP_BYTES of JSONL (20 runs, per-step
# extras): wall time, CPU time, MB/s per core of CPU and peak RSS of
# `crlbatch score`. Not run in CI.
SWEEP_BYTES ?= 1000000000
SWEEP_DIR   ?= /tmp/crlbatch-sweep-$(SWEEP_BYTES)
bench-sweep: build
	@test -d $(SWEEP_DIR) || bin/crlbatch synth --out $(SWEEP_DIR) --family ppo --family sac --family ewc --family dqn \
	  --seeds 5 --target-bytes $(SWEEP_BYTES) --extras --seed 1
	@rm -rf $(SWEEP_DIR)-out
	@/usr/bin/time -f '%e %U %S %M' -o $(SWEEP_DIR).time bin/crlbatch score $(SWEEP_DIR) --out $(SWEEP_DIR)-out --quiet
	@mb=$$(du -sb $(SWEEP_DIR) | cut -f1); read wall user sys rss < $(SWEEP_DIR).time; \
	  awk -v mb=$$mb -v w=$$wall -v u=$$user -v s=$$sys -v r=$$rss 'BEGIN { \
	    printf "sweep %.0f MB  wall %.2f s  cpu %.2f s  %.0f MB/s wall  %.0f MB/s per core of CPU  peak RSS %.0f MB\n", \
	      mb/1e6, w, u+s, mb/1e6/w, mb/1e6/(u+s), r/1024 }'

# Every fuzz target for FUZZTIME each (FUZZFLAGS: arguments after the package, e.g. -args …).
# The targets are found in the packages' test files by their declarations
# (`func FuzzX(f *testing.F)` at the start of a line), not by `go test -list`,
# which builds and links every package's test binary first (minutes of CI).
fuzz:
	@set -e; $(GO) list -f '{{.ImportPath}} {{.Dir}}' $(PKGS) | while read -r pkg dir; do \
	  for f in $$(cat "$$dir"/*_test.go 2>/dev/null | sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p'); do \
	    echo "== $$pkg $$f"; $(FUZZGO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg $(FUZZFLAGS) </dev/null; \
	  done; done

# A short smoke of every target (CI). It starts from the committed seed
# corpus only, in a fresh cache: a large cached corpus from earlier fuzzing
# can take longer to replay than the smoke lasts.
fuzz-smoke:
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	  $(MAKE) fuzz FUZZTIME=10s FUZZFLAGS="-args -test.fuzzcachedir=$$dir"

deps:
	$(GO) mod tidy && $(GO) mod verify

# Score the bundled example sweep into results/example.
example:
	$(GO) run ./cmd/crlbatch score configs/example-sweep --out results/example --overwrite

clean:
	rm -rf bin results

# Side by side (issue 7): crlbatch score against DuckDB's read_ndjson + GROUP BY
# (in-process, bin/duckdbq) and pandas on the same synthetic sweeps of two
# shapes, regular (crlbatch synth) and irregular (bench/irregulargen)
# (BENCH_BYTES, default 1 GB of JSONL each, plain and zstd, 20 objects and
# one, generated once under BENCH_DIR and reused), alternating
# rounds; prints medians and ratios as Markdown (bench/compare.sh says what
# it needs and measures; docs/performance.md keeps the latest table). The 4 GB
# variant scores under --memory-limit and compares its peak RSS with the 1 GB
# run's (run bench-compare first). Not run in CI.
.PHONY: bench-compare bench-compare-4g bench-duckdbq bench-irregulargen
bench-compare: build bench-duckdbq bench-irregulargen
	bench/compare.sh

bench-compare-4g: build bench-duckdbq bench-irregulargen
	BENCH_BYTES=4000000000 bench/compare.sh

# The generator of the irregular sweep shape (issue 16): rows as Python's
# json.dumps writes them (bench/irregulargen/main.go).
bench-irregulargen:
	$(GO) build -o bin/irregulargen ./bench/irregulargen

# DuckDB in this process for the benchmarks (issue 16): bench/duckdbq is a
# module of its own (duckdb-go, cgo, a C compiler and ~70 MB of DuckDB's
# library), outside ./..., so crlbatch's module stays free of cgo and
# `make test` never builds it.
bench-duckdbq:
	cd bench/duckdbq && CGO_ENABLED=1 $(GO) build -o ../../bin/duckdbq .

# Linear cost in every dimension (issue 16): runs, labels per run, rows per
# run, objects, intervals per run, families and parts per run each grow 10×
# twice; prints time, CPU and peak RSS per step and the ratio between steps
# (bench/scale.sh says what it builds and measures; docs/performance.md keeps
# the latest table). Not run in CI.
.PHONY: bench-scale
bench-scale: build bench-duckdbq
	bench/scale.sh


# What the figures add to the 1 GB benchmark sweep (issue 14): score with
# --figures=false and without in alternating rounds; prints medians of wall,
# CPU and peak RSS and the ratios (bench/figures.sh says how; docs/performance.md,
# "Figures", keeps the latest table). Not run in CI.
.PHONY: bench-figures
bench-figures:
	bench/figures.sh
