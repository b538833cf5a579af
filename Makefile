# whestbake — build, test, benchmark, demo. `make help` lists the targets.
GO        ?= go
BIN       := bin
PYTHON    ?= /usr/bin/python3
DEMO_OUT  := out/demo
WB        := $(BIN)/whestbake

.PHONY: help build test vet bench bench-deps bench-scale demo clean

help:
	@echo "make demo   - dev stack + worker + a two-split bake through Temporal, then download and inspect the release"
	@echo "make test   - go vet + all tests (what CI runs)"
	@echo "make bench  - CPU engines vs a numpy peer, side by side"
	@echo "make bench-scale - peak memory and time of every dataset verb and activity on a 2 GiB dataset (needs 8 GiB of free disk)"
	@echo "make build  - binaries into $(BIN)/"

build:
	$(GO) build -o $(BIN)/whestbake ./cmd/starter
	$(GO) build -o $(BIN)/whestbake-worker ./cmd/worker

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# The concurrent packages (engines' thread pools, parallel MLPs, heartbeat
# goroutines, the workflow window) also run under the race detector; the rest
# run once without it. E2E_REQUIRED=1: a missing server binary fails the run
# instead of skipping the tests that need it.
RACE_PKGS := ./gpuengine ./internal/bake ./activities ./workflows

test: vet lint tools workflowcheck
	E2E_REQUIRED=1 $(GO) test -count=1 $$($(GO) list ./... | grep -v -x -F $(foreach p,$(RACE_PKGS),-e github.com/whestbake/whestbake/$(patsubst ./%,%,$(p))))
	E2E_REQUIRED=1 $(GO) test -race -count=1 $(RACE_PKGS)

# staticcheck, pinned like the servers; its one suppression is in the code
# with the reason (//lint:ignore).
STATICCHECK_VERSION := v0.8.2
.PHONY: lint
lint:
	@$(call install-tool,staticcheck,honnef.co/go/tools/cmd/staticcheck,$(STATICCHECK_VERSION))
	$(BIN)/staticcheck ./...

# The servers the tests and `whestbake dev up` run (no Docker here), built
# from the Go module proxy into bin/. Newer Temporal CLI tags do not build
# with `go install` (replace directive); MinIO is pinned to a commit.
TEMPORAL_CLI_VERSION := v1.5.1
MINIO_VERSION        := v0.0.0-20260212201848-7aac2a2c5b7c

.PHONY: tools
tools:
	@$(call install-tool,temporal,github.com/temporalio/cli/cmd/temporal,$(TEMPORAL_CLI_VERSION))
	@$(call install-tool,minio,github.com/minio/minio,$(MINIO_VERSION))

# install-tool NAME,PACKAGE,VERSION: go install PACKAGE@VERSION into bin/
# unless bin/NAME exists and its stamp bin/.NAME.version records exactly
# that, so a version bump rebuilds. A cold build takes about 5 minutes.
define install-tool
if [ -x $(BIN)/$(1) ] && [ "$$(cat $(BIN)/.$(1).version 2>/dev/null)" = "$(2)@$(3)" ]; then \
	echo "$(BIN)/$(1): $(2)@$(3) (built)"; \
else \
	echo "building $(BIN)/$(1) from $(2)@$(3) (minutes)"; \
	mkdir -p $(BIN) && rm -f $(BIN)/.$(1).version; \
	GOBIN=$(abspath $(BIN)) $(GO) install $(2)@$(3) && echo "$(2)@$(3)" > $(BIN)/.$(1).version; \
fi
endef

# The numpy peer needs Debian's numpy on OpenBLAS, which is what a whestbench user's numpy uses.
bench-deps:
	@$(PYTHON) -c 'import numpy' 2>/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy libopenblas0-pthread; }

bench: build bench-deps
	$(WB) bench --python $(PYTHON)

# docs/benchmarks.md's memory table: 1000 MLPs of 256×8 (about 2 GiB), each
# verb under /usr/bin/time, each activity against a private MinIO.
bench-scale: build tools
	$(GO) run ./internal/bench/scale -whestbake $(WB) -bin-dir $(BIN)

# The demo is the real thing on the local dev stack: a worker (both roles, in
# the background), a two-split bake through Temporal with progress bars, then
# the release downloaded and inspected. Each run gets a fresh bake ID and
# release tag (both are never reused), so it can run again and again. The dev
# stack stays up for the Web UI; `bin/whestbake dev down` stops it.
DEMO_CONFIG := configs/demo.yaml
DEMO_PID    := .whestbake/demo-worker.pid
DEMO_LOG    := .whestbake/demo-worker.log
demo: tools build
	@$(WB) dev up
	@set -e; ts=$$(date +%Y%m%d-%H%M%S); id=demo-$$ts; tag=v1-$$ts; mkdir -p $(dir $(DEMO_PID)); \
	if [ -f $(DEMO_PID) ] && kill -0 $$(cat $(DEMO_PID)) 2>/dev/null; then kill $$(cat $(DEMO_PID)); sleep 1; fi; \
	$(BIN)/whestbake-worker --role all --config-file $(DEMO_CONFIG) >$(DEMO_LOG) 2>&1 & pid=$$!; echo $$pid >$(DEMO_PID); \
	trap 'kill $$pid 2>/dev/null; for i in $$(seq 50); do kill -0 $$pid 2>/dev/null || break; sleep 0.2; done; rm -f $(DEMO_PID); echo "worker stopped"' EXIT; \
	trap 'exit 130' INT TERM HUP PIPE; \
	echo "worker pid $$pid (role all), log $(DEMO_LOG)"; \
	WHESTBAKE_RELEASE_TAG=$$tag $(WB) bake --config-file $(DEMO_CONFIG) --id $$id --wait; \
	rm -rf $(DEMO_OUT); \
	$(WB) dataset download s3://releases/datasets/demo/$$tag --output $(DEMO_OUT) --config-file $(DEMO_CONFIG); \
	$(WB) dataset verify $(DEMO_OUT) --k 2; \
	$(WB) dataset inspect $(DEMO_OUT); \
	echo; echo "Web UI: http://127.0.0.1:8233/namespaces/default/workflows/bake%2F$$id"; \
	echo "The dev stack keeps running for the Web UI; stop it with: $(WB) dev down"

# workflowcheck flags non-deterministic code reachable from workflow functions
# (map iteration, time.Now, goroutines, I/O); the replay tests catch the rest.
# The stamp file makes a version bump reinstall it.
WORKFLOWCHECK_VERSION := v0.6.0
.PHONY: workflowcheck
$(BIN)/.workflowcheck-$(WORKFLOWCHECK_VERSION):
	GOBIN=$(CURDIR)/$(BIN) $(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)
	@touch $@
workflowcheck: $(BIN)/.workflowcheck-$(WORKFLOWCHECK_VERSION)
	$(BIN)/workflowcheck ./workflows/...

clean:
	rm -rf $(BIN) out

# On a machine with the CUDA toolkit (docs/GPU.md): the shim makes gorgonia.org/cu build on CUDA 13.
CUDA_HOME ?= /usr/local/cuda
CUDA_ENV  := CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -I$(CURDIR)/gpuengine/internal/cudashim -I$(CUDA_HOME)/include" CGO_LDFLAGS="-L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs"

.PHONY: build-cuda test-cuda
build-cuda:
	$(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/whestbake ./cmd/starter
	$(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/whestbake-worker ./cmd/worker

test-cuda:
	$(CUDA_ENV) $(GO) vet -tags cuda ./gpuengine/
	$(CUDA_ENV) $(GO) test -tags cuda -count=1 ./gpuengine/...
