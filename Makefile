# whestbake — build, test, benchmark, demo. `make help` lists the targets.
GO        ?= go
BIN       := bin
PYTHON    ?= /usr/bin/python3
DEMO_OUT  := out/demo
WB        := $(BIN)/whestbake

.PHONY: help build test vet bench bench-deps demo clean

help:
	@echo "make demo   - build and run a small two-split bake, then inspect it"
	@echo "make test   - go vet + all tests (what CI runs)"
	@echo "make bench  - CPU engines vs a numpy peer, side by side"
	@echo "make build  - binaries into $(BIN)/"

build:
	$(GO) build -o $(BIN)/whestbake ./cmd/starter
	$(GO) build -o $(BIN)/whestbake-worker ./cmd/worker

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

test: vet
	$(GO) test -count=1 ./...

# The numpy peer needs Debian's numpy on OpenBLAS, which is what a whestbench user's numpy uses.
bench-deps:
	@$(PYTHON) -c 'import numpy' 2>/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy libopenblas0-pthread; }

bench: build bench-deps
	$(WB) bench --python $(PYTHON)

# Until the Temporal DAG lands, the demo is a local two-split bake: seeds per split,
# the public split baked in two slices and merged, the holdout split in one go,
# then combine-splits and inspect.
DEMO_SHAPE := --width 128 --depth 4 --n-samples 200_000
demo: build
	@rm -rf $(DEMO_OUT) && mkdir -p $(DEMO_OUT)
	$(WB) dataset generate-seeds --n-mlps 4 --seed 1 --output $(DEMO_OUT)/public-seeds.json
	$(WB) dataset generate-seeds --n-mlps 3 --seed 2 --output $(DEMO_OUT)/holdout-seeds.json
	$(WB) dataset bake --n-mlps 4 $(DEMO_SHAPE) --mlp-seeds $(DEMO_OUT)/public-seeds.json --split public --slice 0/2 --output $(DEMO_OUT)/public-p0
	$(WB) dataset bake --n-mlps 4 $(DEMO_SHAPE) --mlp-seeds $(DEMO_OUT)/public-seeds.json --split public --slice 1/2 --output $(DEMO_OUT)/public-p1
	$(WB) dataset merge $(DEMO_OUT)/public-p0 $(DEMO_OUT)/public-p1 --output $(DEMO_OUT)/public
	$(WB) dataset bake --n-mlps 3 $(DEMO_SHAPE) --mlp-seeds $(DEMO_OUT)/holdout-seeds.json --split holdout --config holdout --output $(DEMO_OUT)/holdout
	$(WB) dataset combine-splits $(DEMO_OUT)/public $(DEMO_OUT)/holdout --output $(DEMO_OUT)/dataset
	$(WB) dataset verify $(DEMO_OUT)/dataset --k 2
	$(WB) dataset inspect $(DEMO_OUT)/dataset

clean:
	rm -rf $(BIN) out
