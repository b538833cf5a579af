# whestbake — build, test, benchmark, demo. `make help` lists the targets.
GO        ?= go
BIN       := bin
# The peers' interpreter: the Python judge's (make pyjudge), which runs whestbench.
PYTHON    ?= $(PYJUDGE)/bin/python
DEMO_OUT  := out/demo
WB        := $(BIN)/whestbake

.PHONY: help build test vet bench bench-deps bench-scale demo clean

help:
	@echo "make demo   - dev stack + worker + a two-split bake through Temporal, then download and inspect the release"
	@echo "make test   - go vet + all tests (CI runs it, then bench-ci)"
	@echo "make bench  - CPU engines vs whestbench's own bake (create_dataset), side by side"
	@echo "make bench-check    - the regression gate: speed ratios, peak memory and work counts against bench/baseline.json"
	@echo "make bench-baseline - re-record this machine class's entry of bench/baseline.json (ONLY=regexp: some metrics), to accept an intended change"
	@echo "make bench-ci       - the gate as CI runs it (3 rounds, wide margins for what varies between hosts of a class)"
	@echo "make bench-cpu      - clock, FP32 peak, forward kernel, philox twin by phase, 1 and 2 threads, numpy peer: this machine's CPU tables"
	@echo "make bench-torch    - make bench with the torch peer on the CPU (whestbench's create_dataset_torch; make pyjudge-torch, 530 MB)"
	@echo "make bench-scale    - peak memory and time of every dataset verb and activity on a 2 GiB dataset (needs 8 GiB of free disk)"
	@echo "make bench-fleet    - 64 GPU-role worker processes (CPU engine) on one bake of 2,000 slices, on a private dev stack"
	@echo "make build  - binaries into $(BIN)/"
	@echo "make image  - the control image without Docker, an OCI layout in out/image/ (the same digest for a commit)"
	@echo "make pyjudge - the Python judge (whestbench, datasets, pyarrow, huggingface_hub, pinned) into .pyjudge/"
	@echo "make pyjudge-torch - the judge with whestbench's pinned PyTorch for the CPU, into .pyjudge-torch/ (530 MB; not part of make test)"
	@echo "make gpu-acceptance - on a GPU machine: every CUDA check, speed table, phases, calibration (GPU_OUT=dir)"
	@echo "make cuda-check - CUDA code without a GPU: cuda-tagged build and vet, NVRTC and ptxas on every kernel shape (needs the CUDA toolkit)"

build:
	$(GO) build -o $(BIN)/whestbake ./cmd/starter
	$(GO) build -o $(BIN)/whestbake-worker ./cmd/worker

# The control image without Docker (internal/image, docs/DEPLOY.md §1): an OCI
# image layout in $(IMAGE_OUT), stamped with HEAD's hash and time, the same
# digest every time for a commit. It replaces an earlier layout.
IMAGE_OUT ?= out/image/whestbake-control
.PHONY: image
image:
	rm -rf $(IMAGE_OUT)
	@mkdir -p $(dir $(IMAGE_OUT))
	$(GO) run ./internal/image/cmd/imagebuild -out $(IMAGE_OUT)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# The concurrent packages (engines' thread pools, parallel MLPs, heartbeat
# goroutines, the workflow window, the Hub push's streamed commit and its
# stand-in's stalls) also run under the race detector; the rest
# run once without it. E2E_REQUIRED=1: a missing server binary fails the run
# instead of skipping the tests that need it. The e2e package (a 5,000-slice
# split among its tests) takes 4-6 minutes on a quiet 2-core machine and more
# than go test's default 10-minute limit on a loaded one: TEST_TIMEOUT bounds
# each package instead.
TEST_TIMEOUT ?= 30m
# The engines' tests run once more with the AVX2 kernels forced
# (WHESTBAKE_CPU_KERNEL, gpuengine.CPUKernelEnv): what an AVX2-only host runs
# is tested on an AVX-512 one too (the kernel packages' own tests already run
# every kernel the CPU has; this covers the engines built on them).
AVX2_PKGS := ./gpuengine ./gpuengine/internal/cpukernel ./gpuengine/internal/philox
RACE_PKGS := ./gpuengine ./internal/rows ./internal/localbake ./internal/verify ./activities ./workflows ./internal/hub ./internal/hub/hubtest

test: vet lint tools workflowcheck readers hubjs pyjudge
	E2E_REQUIRED=1 READERS_REQUIRED=1 HUBJS_REQUIRED=1 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v -x -F $(foreach p,$(RACE_PKGS),-e github.com/whestbake/whestbake/$(patsubst ./%,%,$(p))))
	E2E_REQUIRED=1 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	WHESTBAKE_CPU_KERNEL=avx2 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(AVX2_PKGS)
	@$(MAKE) --no-print-directory fuzz-short FUZZTIME=2000x

# The independent parquet readers (DuckDB, hyparquet, apache-arrow) that
# dataset's reader tests (TestIndependentReadersAgree in dataset/internal/parquetio,
# TestPreparedArrowIndependentReader) run through Node, pinned by the lock
# file; READERS_REQUIRED=1 above makes a missing install fail those tests.
# npm install, not npm ci: the lock was made where the registry serves only
# linux-x64 DuckDB bindings, and npm ci refuses a lock without the other
# platforms' optional packages.
READERS := dataset/testdata/readers
.PHONY: readers
readers:
	@[ -d $(READERS)/node_modules ] || npm install --prefix $(READERS) --no-audit --no-fund

# The official JavaScript Hub client (@huggingface/hub), pinned by its lock
# file, that internal/hub/hubjs's TestOfficialClientAgainstStandIn drives
# against the Hub stand-in: the stand-in is ours, the client is the judge.
# HUBJS_REQUIRED=1 above makes a missing install fail that test.
HUBJS := internal/hub/hubjs
.PHONY: hubjs
hubjs:
	@[ -d $(HUBJS)/node_modules ] || npm install --prefix $(HUBJS) --no-audit --no-fund

# The Python judge (internal/pyjudge): whestbench's `whest` and its Python
# API, datasets, pyarrow and huggingface_hub at the versions
# internal/pyjudge/requirements.txt pins by sha256, in .pyjudge/. The tests
# that run them skip without it, saying so; PYJUDGE_REQUIRED=1 (.ci/run sets
# it) makes a failed install, and so every such skip, fail. The stamp,
# written last, is the lock's sha256: a changed lock reinstalls.
PYJUDGE        := .pyjudge
PYJUDGE_LOCK   := internal/pyjudge/requirements.txt
PYJUDGE_PYTHON ?= python3
.PHONY: pyjudge
pyjudge:
	@want=$$(sha256sum $(PYJUDGE_LOCK) | cut -d' ' -f1); \
	if [ "$$(cat $(PYJUDGE)/.requirements.sha256 2>/dev/null)" = "$$want" ]; then \
		echo "$(PYJUDGE): $(PYJUDGE_LOCK) (installed)"; exit 0; fi; \
	echo "installing the Python judge into $(PYJUDGE) from $(PYJUDGE_LOCK) (a minute)"; \
	rm -rf $(PYJUDGE); \
	if $(PYJUDGE_PYTHON) -m venv $(PYJUDGE) && $(PYJUDGE)/bin/pip install -q \
		--disable-pip-version-check --require-hashes --no-deps --only-binary :all: \
		-r $(PYJUDGE_LOCK); then echo $$want > $(PYJUDGE)/.requirements.sha256; \
	elif [ "$$PYJUDGE_REQUIRED" = 1 ]; then echo "the Python judge did not install"; exit 1; \
	else echo "the Python judge did not install (is PyPI reachable?): the tests that run whestbench skip"; fi

# staticcheck, pinned like the servers; its one suppression is in the code
# with the reason (//lint:ignore).
STATICCHECK_VERSION := v0.8.2
.PHONY: lint
lint:
	@$(call install-tool,staticcheck,honnef.co/go/tools/cmd/staticcheck,$(STATICCHECK_VERSION))
	$(BIN)/staticcheck ./...

# fuzz-short runs every Fuzz target for FUZZTIME each (-fuzz takes one target
# per run); `make test` runs 2000 inputs a target, the checked-in corpora
# already running as ordinary tests. FUZZTIME is a count, not a duration: Go
# before 1.27 can fail a duration's run at its end with "context deadline
# exceeded", no input at fault, when a worker is slow to stop
# (golang/go#75804), as a parquet target on a loaded CI host did. A
# developer may still give a duration, such as FUZZTIME=1m.
FUZZTIME ?= 10000x
.PHONY: fuzz-short
fuzz-short:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$t ($$(dirname $$f))"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f); \
		done; \
	done

# The servers the tests and `whestbake dev up` run (no Docker here), built
# from the Go module proxy into bin/. Newer Temporal CLI tags do not build
# with `go install` (replace directive); MinIO is pinned to a commit.
TEMPORAL_CLI_VERSION := v1.5.1
MINIO_VERSION        := v0.0.0-20260212201848-7aac2a2c5b7c

# The production-topology test (e2e/production_test.go) runs a real Temporal
# server, not the dev server: the server and its SQL schema tool at the
# version the CLI embeds, persisted on PostgreSQL.
TEMPORAL_SERVER_VERSION := v1.29.1

# Temporal's Web UI server for a self-hosted cluster (docs/DEPLOY.md §2,
# deploy/temporal-ui/): the ui-server module the pinned CLI embeds
# (github.com/temporalio/cli v1.5.1's go.mod; deploy/deploy_test.go checks
# that the two agree).
TEMPORAL_UI_VERSION := v2.42.1

# tools is all of them; dev-tools only what `whestbake dev up` runs, which is
# all `make demo` needs (the server and SQL tool take most of a cold build).
.PHONY: tools dev-tools server-tools ui-tools
tools: dev-tools server-tools ui-tools

dev-tools:
	@$(call install-tool,temporal,github.com/temporalio/cli/cmd/temporal,$(TEMPORAL_CLI_VERSION))
	@$(call install-tool,minio,github.com/minio/minio,$(MINIO_VERSION))

server-tools:
	@$(call install-tool,temporal-server,go.temporal.io/server/cmd/server,$(TEMPORAL_SERVER_VERSION),server)
	@$(call install-tool,temporal-sql-tool,go.temporal.io/server/cmd/tools/sql,$(TEMPORAL_SERVER_VERSION),sql)

ui-tools:
	@$(call install-tool,temporal-ui-server,github.com/temporalio/ui-server/v2/cmd/server,$(TEMPORAL_UI_VERSION),server)

# install-tool NAME,PACKAGE,VERSION[,BUILT]: go install PACKAGE@VERSION into
# bin/ unless bin/NAME exists and its stamp bin/.NAME.version records exactly
# that, so a version bump rebuilds. A cold build takes about 5 minutes.
# BUILT is the name go install gives the binary when it is not NAME (the
# server's commands are plain "server" and "sql", too vague for a shared
# bin/): it is built in a scratch directory and moved into place, so bin/
# never holds a half-written binary under its final name.
define install-tool
if [ -x $(BIN)/$(1) ] && [ "$$(cat $(BIN)/.$(1).version 2>/dev/null)" = "$(2)@$(3)" ]; then \
	echo "$(BIN)/$(1): $(2)@$(3) (built)"; \
else \
	echo "building $(BIN)/$(1) from $(2)@$(3) (minutes)"; \
	mkdir -p $(BIN) && rm -f $(BIN)/.$(1).version; \
	if [ -n "$(4)" ]; then \
		tmp=$$(mktemp -d) && GOBIN=$$tmp $(GO) install $(2)@$(3) && mv $$tmp/$(4) $(BIN)/$(1) && rmdir $$tmp \
		&& echo "$(2)@$(3)" > $(BIN)/.$(1).version; \
	else \
		GOBIN=$(abspath $(BIN)) $(GO) install $(2)@$(3) && echo "$(2)@$(3)" > $(BIN)/.$(1).version; \
	fi; \
fi
endef

# The peers run whestbench's own bakes (internal/bench/whestbench_peer.py)
# in the Python judge: its whestbench, flopscope and numpy, with the OpenBLAS
# numpy's wheel ships, are what a whestbench user's bake runs.
bench-deps: pyjudge
	@[ -f $(PYJUDGE)/.requirements.sha256 ] || { echo "the peers run in the Python judge, which did not install in $(PYJUDGE) (make pyjudge)"; exit 1; }

bench: build bench-deps
	$(WB) bench --python $(PYTHON)

# The torch peer on the CPU, opt-in (not part of make test or CI: 530 MB):
# .pyjudge-torch/ is a venv of the judge's Python that reads whestbench,
# numpy and the rest from the judge's site-packages (a .pth file) and holds
# the torch whestbench's lock pins, by sha256 and without its nvidia-* and
# triton wheels (internal/bench/torch-requirements.txt), with stand-ins for
# the CUDA libraries torch's loader asks for (internal/bench/cuda_stubs.py;
# needs readelf and cc). The stamp, written last, is the sha256 of both files.
PYJUDGE_TORCH      := .pyjudge-torch
PYJUDGE_TORCH_LOCK := internal/bench/torch-requirements.txt
.PHONY: pyjudge-torch bench-torch
pyjudge-torch: bench-deps
	@want=$$(cat $(PYJUDGE_TORCH_LOCK) internal/bench/cuda_stubs.py | sha256sum | cut -d' ' -f1); \
	if [ "$$(cat $(PYJUDGE_TORCH)/.requirements.sha256 2>/dev/null)" = "$$want" ]; then \
		echo "$(PYJUDGE_TORCH): $(PYJUDGE_TORCH_LOCK) (installed)"; exit 0; fi; \
	echo "installing the torch peer's PyTorch into $(PYJUDGE_TORCH) from $(PYJUDGE_TORCH_LOCK) (530 MB)"; \
	rm -rf $(PYJUDGE_TORCH); \
	site='import sysconfig; print(sysconfig.get_paths()["purelib"])'; \
	$(PYJUDGE)/bin/python -m venv $(PYJUDGE_TORCH) && \
	$(PYJUDGE)/bin/python -c "$$site" > "$$($(PYJUDGE_TORCH)/bin/python -c "$$site")/pyjudge.pth" && \
	$(PYJUDGE_TORCH)/bin/pip install -q --disable-pip-version-check --require-hashes --no-deps \
		--only-binary :all: -r $(PYJUDGE_TORCH_LOCK) && \
	$(PYJUDGE_TORCH)/bin/python internal/bench/cuda_stubs.py $(PYJUDGE_TORCH)/cuda-stubs && \
	$(PYJUDGE_TORCH)/bin/python -c 'import torch, whestbench.dataset_torch' && \
	echo $$want > $(PYJUDGE_TORCH)/.requirements.sha256

bench-torch: build pyjudge-torch
	$(WB) bench --python $(PYJUDGE_TORCH)/bin/python --torch-peer --torch-device cpu

# The performance and memory regression gate (docs/benchmarks.md). `go run`
# builds the gate from this tree, so its engine probes are this tree's code;
# it builds whestbake, the worker and the A/B reference itself, in a scratch
# directory. bench/baseline.json holds one entry per machine class (CPU
# vendor, family and model, the engines' forward kernel, CPU count): the
# engines' ratios to the numpy peer depend on the CPU and are gated only
# against this machine's class ("recorded, not gated" on a class without an
# entry); memory, work counts and the A/B ratio are gated on every machine.
# bench-baseline writes or replaces this class's entry only. ONLY=regexp
# restricts a run to the metrics whose "workload / metric" matches; BASELINE
# picks another baseline file. bench-ci is the part CI runs: 3 engine rounds,
# the A/B ratio as everywhere, and the numpy ratios (where this class has an
# entry) and peak RSS against wide margins, since CI gets any VM of its
# class, under load. The A/B reference is the last commit that changed the
# baseline file (REF=commit names another); a clone without that commit
# fails the A/B rows, saying so. DEMO_SLOWDOWN=0.3 makes this tree's engine
# probes burn 30 % more CPU time, to see the gate fail a slowed build.
# WHESTBAKE_CPU_KERNEL=avx2 caps the engines at the AVX2 kernels, the class
# of an AVX2-only host (the gate passes it to its children).
BASELINE  ?= bench/baseline.json
ONLY      ?=
REF       ?=
DEMO_SLOWDOWN ?=
BENCHGATE := $(GO) run ./internal/bench/cmd/benchgate
GATEFLAGS  = --baseline $(BASELINE) --python $(PYTHON) $(if $(ONLY),--only '$(ONLY)')
CHECKFLAGS = $(GATEFLAGS) $(if $(REF),--ref '$(REF)') $(if $(DEMO_SLOWDOWN),--demo-slowdown $(DEMO_SLOWDOWN))

.PHONY: bench-check bench-baseline bench-ci bench-cpu
bench-check: tools bench-deps
	$(BENCHGATE) check $(CHECKFLAGS)

bench-baseline: tools bench-deps
	$(BENCHGATE) baseline $(GATEFLAGS)

bench-ci: tools bench-deps
	$(BENCHGATE) check --ci $(CHECKFLAGS)

# docs/benchmarks.md's CPU tables on this machine, all in CPU time: the core
# clock and FP32 peak, the forward kernel alone, the philox twin whole, by
# phase and on two threads, and the numpy peer with the OpenBLAS core it
# picked. PPROF=dir also writes CPU profiles of the twin there. On a new
# machine class: `make bench-cpu bench-baseline`.
PPROF ?=
bench-cpu: bench-deps
	$(BENCHGATE) cpu --python $(PYTHON) $(if $(PPROF),--pprof '$(PPROF)')

# docs/benchmarks.md's memory table: 1000 MLPs of 256×8 (about 2 GiB), each
# verb under /usr/bin/time, each activity against a private MinIO.
bench-scale: build tools
	$(GO) run ./internal/bench/scale -whestbake $(WB) -bin-dir $(BIN)

# docs/benchmarks.md's fleet table: FLEET_WORKERS GPU-role worker processes
# (CPU engine, one thread each) bake one split of FLEET_SLICES one-MLP slices
# with max-in-flight auto on a private dev stack (e2e/fleet_test.go, which
# `make test` skips).
FLEET_WORKERS ?= 64
FLEET_SLICES  ?= 2000
.PHONY: bench-fleet
bench-fleet: tools
	FLEET_WORKERS=$(FLEET_WORKERS) FLEET_SLICES=$(FLEET_SLICES) E2E_REQUIRED=1 $(GO) test ./e2e -run '^TestFleet$$' -count=1 -v -timeout 60m

# The demo is the real thing on the local dev stack: a worker (both roles, in
# the background), a two-split bake through Temporal with progress bars, then
# the release downloaded (with its report/) and inspected. Each run gets a
# fresh bake ID and release tag (both are never reused), so it can run again
# and again. The dev stack stays up for the Web UI; `bin/whestbake dev down`
# stops it.
# The stack runs on the ports `dev up` recorded in .whestbake/stack.json
# before, else the defaults (7233, 8233, 9000, 9001); a port another program
# holds (another checkout's stack) moves to a free one (--move-if-taken). The
# worker and the starter find them in the record: configs/demo.yaml names no
# server. DEV_TEMPORAL_PORT, DEV_UI_PORT, DEV_MINIO_PORT and
# DEV_MINIO_CONSOLE_PORT choose ports (`make demo DEV_TEMPORAL_PORT=17233`).
DEMO_CONFIG := configs/demo.yaml
DEMO_PID    := .whestbake/demo-worker.pid
DEMO_LOG    := .whestbake/demo-worker.log
DEV_FLAGS    = $(if $(DEV_TEMPORAL_PORT),--temporal-port $(DEV_TEMPORAL_PORT)) \
               $(if $(DEV_UI_PORT),--ui-port $(DEV_UI_PORT)) \
               $(if $(DEV_MINIO_PORT),--minio-port $(DEV_MINIO_PORT)) \
               $(if $(DEV_MINIO_CONSOLE_PORT),--minio-console-port $(DEV_MINIO_CONSOLE_PORT))
demo: dev-tools build
	@$(WB) dev up --move-if-taken $(strip $(DEV_FLAGS))
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
	echo; echo "Report (the bake wrote it, the release carries it): $(DEMO_OUT)/report/index.html"; \
	echo "The bake's Web UI page is linked above; the dev stack keeps running for it"; \
	echo "(\`$(WB) dev status\` shows its address); stop it with: $(WB) dev down"

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

# Records this version's workflow histories into the replay corpus
# (workflows/testdata/histories/v<internal/version.Version>/); run it when
# releasing a version (docs/ARCHITECTURE.md, "Safe upgrades").
.PHONY: record-histories
record-histories: tools
	$(GO) test -count=1 ./workflows/ -run TestRecordHistories -update

clean:
	rm -rf $(BIN) out

# On a machine with the CUDA toolkit (docs/GPU.md): the shim makes gorgonia.org/cu build on CUDA 13.
# CUDA_HOME defaults to NVIDIA's layout, /usr/local/cuda, else Debian's
# nvidia-cuda-toolkit, whose /usr/lib/cuda has bin/ and include/cuda.h but whose
# libraries live in the multiarch directory; CUDA_LIB follows CUDA_HOME, and either
# can be set on the command line. The stubs come first on the link line: the build
# then never needs a driver, and the stub's soname is the driver's (libcuda.so.1),
# which the loader resolves at run time. The rpath makes a cuda binary find
# libnvrtc and libcublas in CUDA_LIB without LD_LIBRARY_PATH: without one the
# dynamic loader kills the process before main, with no word of ours.
CUDA_HOME ?= $(or $(wildcard /usr/local/cuda),$(wildcard /usr/lib/cuda),/usr/local/cuda)
CUDA_LIB  ?= $(if $(filter /usr/lib/cuda,$(CUDA_HOME)),/usr/lib/x86_64-linux-gnu,$(CUDA_HOME)/lib64)
CUDA_ENV  := CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -I$(CURDIR)/gpuengine/internal/cudashim -I$(CUDA_HOME)/include" CGO_LDFLAGS="-L$(CUDA_LIB)/stubs -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB)"

# The GPU acceptance run (docs/GPU.md): on a GPU machine, every CUDA check, the speed
# table against the torch peer, the cuBLAS phases and calibration in one command of
# at most ~9 minutes, its evidence (report.md and a few logs) in GPU_OUT. Without a
# GPU each step that needs one says so and the run goes on.
GPU_OUT ?= out/gpu-acceptance
.PHONY: gpu-acceptance
gpu-acceptance:
	CUDA_HOME=$(CUDA_HOME) bash internal/bench/gpu-acceptance.sh $(GPU_OUT)

.PHONY: build-cuda test-cuda cuda-check
build-cuda:
	$(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/whestbake ./cmd/starter
	$(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/whestbake-worker ./cmd/worker

test-cuda:
	$(CUDA_ENV) $(GO) vet -tags cuda ./gpuengine/
	$(CUDA_ENV) $(GO) test -tags cuda -count=1 ./gpuengine/...

# The CUDA code checked without a GPU (docs/GPU.md, "make cuda-check"), so it cannot
# rot while none is around: the cuda-tagged build and vet, linked against the stub
# libcuda, with the rpath to the CUDA libraries; then NVRTC compiles every kernel
# shape the tests use (and the fused kernel's fallback tilings) with the engine's
# options into cubins for sm_90 and sm_80, and ptxas's report in NVRTC's log must
# show no spill and no local memory (gpuengine/internal/cudacheck). Not part of `make test`: it needs the CUDA
# toolkit (gigabytes; on Debian, nvidia-cuda-toolkit from contrib/non-free).
cuda-check:
	$(CUDA_ENV) $(GO) build -tags cuda ./...
	$(CUDA_ENV) $(GO) vet -tags cuda ./gpuengine/... ./internal/cli/
	$(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/whestbake-cuda-check ./cmd/starter
	@readelf -d $(BIN)/whestbake-cuda-check | grep -q 'R\(UN\)\?PATH.*$(CUDA_LIB)' \
		&& echo "rpath: $$(readelf -d $(BIN)/whestbake-cuda-check | grep -o 'R[UN]*PATH.*')" \
		|| { echo "the cuda build has no rpath to $(CUDA_LIB)"; exit 1; }
	@rm -f $(BIN)/whestbake-cuda-check
	$(CUDA_ENV) PATH="$(CUDA_HOME)/bin:$$PATH" $(GO) test -tags cuda -count=1 -timeout 60m -v ./gpuengine/internal/cudacheck/
