#!/usr/bin/env bash
# The GPU acceptance run (docs/GPU.md, "The acceptance run"): every check of the CUDA
# engine, the speed table against whestbench's own torch backend, the cuBLAS phase
# breakdown, the calibration, the tensor-core probe, the tiling sweep, one Nsight Compute
# launch and the tf32x3 precision, in one command of at most 7 minutes that writes its
# evidence into one directory as it goes.
#
#   internal/bench/gpu-acceptance.sh OUTDIR
#   internal/bench/gpu-acceptance.sh --wheels DIR   (on the build machine: pip downloads
#       whestbench and the pure-Python packages the device image lacks, at the versions
#       internal/pyjudge/requirements.txt pins, into DIR for the run to install)
#
# It never stops at the first failure: every step runs under its own time limit, in
# its own process (one CUDA test per process, so a sticky CUDA error cannot hide the
# first failure), and its outcome becomes a row of OUTDIR/report.md. On a machine
# without a GPU (or without the CUDA toolkit) each step that needs one says so and the
# run goes on, so the script can be dry-run anywhere.
#
# Files written (at most 8, the device tool's limit): report.md (summary and tables),
# build.log, tests.log (the CUDA tests and compute-sanitizer), bench.log (speed,
# calibration, tilings, tf32x3), smi.csv (clocks and power sampled every 500 ms during
# the bench), probe.log (tc_probe and Nsight Compute), tf32_tiles.bin (tc_probe's tiles),
# cudacheck.log.
#
# Environment: CUDA_HOME (default /usr/local/cuda, else Debian's /usr/lib/cuda);
# PEAK_TFLOPS (default: from the GPU's name); BENCH_SAMPLES (default 1e8);
# TEST_LIMIT (seconds per test process, default 120); WHEELS (default .device/whl:
# whestbench and the packages --wheels downloads; without them the speed table has
# no peers); DEADLINE (seconds for the whole run, default 400: steps still
# waiting are reported as not run).
set -u -o pipefail

if [ "${1:-}" = --wheels ]; then
	dir=${2:?usage: gpu-acceptance.sh --wheels DIR}
	cd "$(dirname "$0")/../.."
	mkdir -p "$dir"
	# whestbench 0.16.2 needs these beyond what the device image holds (docs/GPU.md);
	# multiprocess's wheel is tagged per Python minor version, the device's is 3.12.
	for name in whestbench datasets faker flopscope dill multiprocess plotext toml tzdata; do
		version=$(grep -m1 -i "^$name==" internal/pyjudge/requirements.txt | sed 's/^[^=]*==\([^ ;]*\).*/\1/')
		[ -n "$version" ] || { echo "no pinned version of $name in internal/pyjudge/requirements.txt" >&2; exit 2; }
		python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
			--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$dir" "$name==$version" || exit
	done
	ls "$dir"
	exit 0
fi

out=${1:?usage: gpu-acceptance.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d /tmp/gpu-acceptance.XXXXXX)
report=$out/report.md
t0=$(date +%s)

cuda=${CUDA_HOME:-$( [ -d /usr/local/cuda ] && echo /usr/local/cuda || echo /usr/lib/cuda )}
# NVIDIA lays the libraries out in $cuda/lib64; Debian's nvidia-cuda-toolkit (/usr/lib/cuda) in the
# multiarch directory, with the stub libcuda in its stubs/.
if [ "$cuda" = /usr/lib/cuda ]; then cudalib=/usr/lib/x86_64-linux-gnu; else cudalib=$cuda/lib64; fi
# An image may keep cuBLAS or NVRTC outside $cudalib (pip's nvidia-* wheels, a
# cuda-13.x directory beside a minimal /usr/local/cuda). For each library and header
# the build needs and $cuda lacks, find one, give the linker an unversioned name for the
# library (links/), and put its directory on the include path or the rpath.
links=$work/links
mkdir -p "$links"
incs="" libdirs=""
found=""
for lib in cublas nvrtc; do
	[ -e "$cudalib/lib$lib.so" ] && continue
	f=$(find /usr/local /usr/lib /opt -xdev -name "lib$lib.so.[0-9]*" ! -path '*/stubs/*' 2>/dev/null | sort -V | tail -1)
	if [ -n "$f" ]; then
		ln -sf "$f" "$links/lib$lib.so"
		libdirs="$libdirs $(dirname "$f")"
		found="$found lib$lib: $f;"
	fi
done
[ -e "$cudalib/stubs/libcuda.so" ] || [ -e "$cudalib/libcuda.so" ] || {
	f=$(find /usr/local /usr/lib /opt -xdev -name 'libcuda.so*' 2>/dev/null | head -1)
	[ -n "$f" ] && ln -sf "$f" "$links/libcuda.so" && found="$found libcuda: $f;"
}
for h in cublas_v2.h nvrtc.h; do
	[ -e "$cuda/include/$h" ] && continue
	f=$(find /usr/local /usr/include /opt -xdev -name "$h" 2>/dev/null | head -1)
	[ -n "$f" ] && incs="$incs -I$(dirname "$f")" && found="$found $h: $f;"
done
# The shim first: it lets gorgonia.org/cu v0.9.6 compile against CUDA 13's cuda.h.
# CGO_CFLAGS replaces Go's default -O2 -g, so they are repeated. The rpath lets the
# binaries find libnvrtc and libcublas without LD_LIBRARY_PATH.
rpath=$cudalib
for d in $libdirs; do rpath="$rpath:$d"; done
export CGO_ENABLED=1 NVIDIA_TF32_OVERRIDE=0
export CGO_CFLAGS="-O2 -g -I$root/gpuengine/internal/cudashim -I$cuda/include$incs"
export CGO_LDFLAGS="-L$cudalib -L$cudalib/stubs -L$links -Wl,-rpath,$rpath"
export PATH="$cuda/bin:$PATH"

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then have_gpu=1; fi

# row STEP RESULT DETAIL: one line of the summary table, written at once (a run cut
# off by its time limit still leaves every finished row).
row() { printf '| %s | %s | %s |\n' "${1//|/\\|}" "${2//|/\\|}" "${3//|/\\|}" >>"$report"; }
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

# run LIMIT LOG CMD...: CMD under a time limit (at most what is left of DEADLINE), its
# output appended to LOG as it runs. Returns CMD's status (124 on a timeout, 125 when
# no time was left to start it).
deadline=${DEADLINE:-400}
run() {
	local limit=$1 log=$2 left=$((deadline - ($(date +%s) - t0) - 5))
	shift 2
	if [ "$left" -lt 10 ]; then
		echo "\$ $* [not run: the ${deadline}s deadline is reached]" >>"$log"
		return 125
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	echo "\$ $*" >>"$log"
	timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
	local rc=$?
	echo "[exit $rc after $(elapsed)]" >>"$log"
	return $rc
}

# detail LOG FROM: the first telling line a step wrote to LOG from line FROM on (a test's
# log line or failure, a panic, a missing library), for the report's detail column.
detail() {
	tail -n +"$2" "$1" | grep -E -m1 '_test\.go:[0-9]+: |^panic: |--- FAIL|error while loading shared libraries|cannot open shared object' |
		sed 's/^[[:space:]]*//' | cut -c1-200 | tr '|' '/'
}

# outcome RC: the result column for an exit status.
outcome() {
	case $1 in
	0) echo passed ;;
	124 | 137) echo "FAILED (time limit)" ;;
	125) echo "not run: out of time" ;;
	*) if [ $have_gpu = 0 ]; then echo "not run: no GPU"; else echo "FAILED (exit $1)"; fi ;;
	esac
}

{
	echo "# GPU acceptance run"
	echo
	echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo
	echo '## Machine'
	echo
	echo '```'
	if [ $have_gpu = 1 ]; then
		nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,compute_mode --format=csv
	else
		echo "no GPU: nvidia-smi missing or lists none"
	fi
	grep -m1 'define CUDA_VERSION' "$cuda/include/cuda.h" 2>/dev/null || echo "no cuda.h under $cuda/include"
	command -v nvcc >/dev/null && nvcc --version | tail -2
	go version
	echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) threads"
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1 | tail -1
	command -v compute-sanitizer >/dev/null && compute-sanitizer --version | tail -1
	echo "CUDA libraries in $cudalib: $(ls "$cudalib" 2>/dev/null | grep -E '^lib(cublas|nvrtc|cuda)\.so' | tr '\n' ' ')"
	echo "found elsewhere:${found:- nothing needed}"
	echo "CGO_CFLAGS=$CGO_CFLAGS"
	echo "CGO_LDFLAGS=$CGO_LDFLAGS"
	echo '```'
	echo
	echo '## Steps'
	echo
	echo '| step | result | detail |'
	echo '|---|---|---|'
} >"$report"

peak=${PEAK_TFLOPS:-}
if [ -z "$peak" ]; then
	case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
	*H100*PCIe*) peak=51.2 ;;
	*H100* | *H200*) peak=66.9 ;; # SXM: 132 SMs × 128 FP32 lanes × 2 × 1.98 GHz
	*) peak=66.9 ;;
	esac
fi

# 1. Build: the engine's test binary first (the GPU checks need nothing else), the CLI,
# the NVRTC check, tc_probe; vet runs in the background with that check.
bin=$work/bin
mkdir -p "$bin"
build=$out/build.log
run 300 "$build" go test -c -tags cuda -o "$bin/gpuengine.test" ./gpuengine/
row "build gpuengine tests" "$(outcome $?)" "go test -c -tags cuda ./gpuengine/"
run 300 "$build" go build -tags cuda -o "$bin/whestbake" ./cmd/starter
rc=$?
row "build whestbake (cuda)" "$(outcome $rc)" "$(ldd "$bin/whestbake" 2>/dev/null | grep -Eo 'lib(cuda|nvrtc|cublas)[^ ]* => [^ ]*' | tr '\n' ' ')"
run 300 "$build" go test -c -tags cuda -o "$bin/cudacheck.test" ./gpuengine/internal/cudacheck/
row "build cudacheck tests" "$(outcome $?)" "NVRTC and ptxas of this toolkit"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
run 120 "$build" nvcc -O3 -arch="sm_${arch:-90}" -o "$bin/tc_probe" internal/bench/tc_probe.cu
row "build tc_probe" "$(outcome $?)" "nvcc -O3 -arch=sm_${arch:-90} internal/bench/tc_probe.cu"

# 2. In the background, on the CPU: vet, and NVRTC and ptxas of the device's own toolkit
# on every kernel shape (the same check as make cuda-check, with this CUDA). Their rows
# are written at the end.
bg=$work/bg
mkdir -p "$bg"
(
	run 240 "$bg/vet.log" nice go vet -tags cuda ./gpuengine/... ./internal/cli/
	echo $? >"$bg/vet.rc"
) &
vetpid=$!
if [ -x "$bin/cudacheck.test" ]; then
	(
		cd gpuengine/internal/cudacheck && run 360 "$out/cudacheck.log" nice "$bin/cudacheck.test" -test.v -test.timeout 350s
		echo $? >"$bg/cudacheck.rc"
	) &
	checkpid=$!
fi

# 3. The tensor-core probe first, on a quiet GPU: FFMA and mma.sync ceilings, the TF32
# mma's rounding, and 1024 tiles for refitting the summation model (docs/GPU.md).
probe=$out/probe.log
if [ -x "$bin/tc_probe" ]; then
	run 60 "$probe" "$bin/tc_probe" "$out/tf32_tiles.bin"
	row "tc_probe" "$(outcome $?)" "$(grep -E '^(FFMA|mma.sync raw, +8|TF32 mma: 1 \+ 0.75)' "$probe" | tr '\n' ';' | cut -c1-300)"
fi

# 4. Each CUDA test in its own process (cuda_test.go, cuda_tf32_test.go).
tests=$out/tests.log
limit=${TEST_LIMIT:-120}
if [ -x "$bin/gpuengine.test" ]; then
	# From the source, not -test.list: a cuda test binary cannot even list its tests
	# without a GPU (gorgonia.org/cu's init exits when cuInit fails).
	for t in $(sed -n 's/^func \(TestCUDA[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' gpuengine/cuda_*test.go); do
		from=$(($(wc -l <"$tests") + 1))
		(cd gpuengine && run "$limit" "$tests" "$bin/gpuengine.test" -test.run "^$t\$" -test.v -test.count 1 -test.timeout "$((limit - 10))s")
		rc=$?
		row "$t" "$(outcome $rc)" "$(detail "$tests" "$from")"
	done
fi

# 5. The speed table against whestbench's own create_dataset and
# create_dataset_torch (internal/bench/whestbench_peer.py, with whestbench and
# its pure-Python dependencies installed from $WHEELS; without them the table has
# no peer rows), with clocks and power sampled, the cuBLAS phases, calibration.
wheels=${WHEELS:-.device/whl}
peer=(--no-peer)
if ls "$wheels"/whestbench-*.whl >/dev/null 2>&1 &&
	run 120 "$out/bench.log" python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$work/site" "$wheels"/*.whl; then
	export PYTHONPATH="$work/site${PYTHONPATH:+:$PYTHONPATH}"
	peer=(--torch-peer)
fi
row "peers" "${peer[*]}" "$(ls "$wheels" 2>/dev/null | tr '\n' ' ')"
if [ -x "$bin/whestbake" ]; then
	smi=
	if [ $have_gpu = 1 ]; then
		nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 >"$out/smi.csv" 2>&1 &
		smi=$!
	fi
	run 240 "$out/bench.log" "$bin/whestbake" bench --python "$(command -v python3)" "${peer[@]}" \
		--configs 256x8,64x4 --n-samples "${BENCH_SAMPLES:-1e8}" --cpu-n-samples 2e5 --peak-tflops "$peak" --phases
	rc=$?
	[ -n "$smi" ] && kill "$smi" 2>/dev/null
	row "whestbake bench --torch-peer --phases" "$(outcome $rc)" "bench.log; clocks and power in smi.csv"
	run 90 "$out/bench.log" "$bin/whestbake" calibrate --device cuda --n-mlps 10 --n-samples 1e9 --width 256 --depth 8
	row "calibrate --device cuda (fused)" "$(outcome $?)" "bench.log"
	run 90 "$out/bench.log" env WHESTBAKE_CUDA_PATH=cublas "$bin/whestbake" calibrate --device cuda --n-mlps 10 --n-samples 1e9 --width 256 --depth 8
	row "calibrate --device cuda (cublas)" "$(outcome $?)" "bench.log"
fi

# bench_rows LOG FROM: "name TFLOP/s;" of each benchmark line LOG got from line FROM on.
bench_rows() {
	tail -n +"$2" "$1" | grep -E '^Benchmark.* TFLOP/s' | sed -E 's/^Benchmark[A-Za-z0-9]*\/([^ ]*)-[0-9]+ .* ([0-9.]+) TFLOP\/s.*/\1 \2/' | tr '\n' ';'
}

# 6. tf32x3: its speed at 256×8 and 64×4, then a bake, its verification (a rerun on the
# same GPU: bit for bit) and its comparison with the fp32 bake of the same MLPs (mode
# tf32x3). Its error against fp32 at 2^24 samples and its invariance to chunks, grid and
# resume are tests of step 4 (TestCUDATF32x3CloseToFP32, TestCUDATF32x3Deterministic).
if [ -x "$bin/gpuengine.test" ]; then
	from=$(($(wc -l <"$out/bench.log" 2>/dev/null || echo 0) + 1))
	(cd gpuengine && run 90 "$out/bench.log" "$bin/gpuengine.test" -test.run '^$' -test.bench '^BenchmarkCUDATF32x3$' -test.benchtime 2x -test.timeout 80s)
	row "tf32x3 speed (bench.log)" "$(outcome $?)" "$(bench_rows "$out/bench.log" "$from")"
fi
if [ -x "$bin/whestbake" ]; then
	e2e=$work/e2e
	mkdir -p "$e2e"
	echo '[11, 22, 33]' >"$e2e/seeds.json"
	bakeflags="--n-mlps 3 --n-samples 1000000 --width 256 --depth 8 --mlp-seeds $e2e/seeds.json --device cuda"
	run 60 "$out/bench.log" "$bin/whestbake" dataset bake $bakeflags --precision tf32x3 -o "$e2e/tf32" &&
		run 60 "$out/bench.log" "$bin/whestbake" dataset bake $bakeflags -o "$e2e/fp32" &&
		run 60 "$out/bench.log" "$bin/whestbake" dataset verify "$e2e/tf32" --mlps all &&
		run 60 "$out/bench.log" "$bin/whestbake" dataset compare "$e2e/fp32" "$e2e/tf32"
	row "tf32x3 bake, verify, compare with fp32" "$(outcome $?)" "$(grep -E 'statistics|mode tf32x3|✓|✗' "$out/bench.log" | tail -5 | tr '\n' ';' | cut -c1-300)"
fi

# 7. The fused kernel's tilings (docs/GPU.md, "Plan B" and the tiling knobs): TFLOP/s of
# each of cudakernel.TilingCandidates at 256×8 and 64×4, each checked bit for bit
# against the default plan's result.
if [ -x "$bin/gpuengine.test" ]; then
	from=$(($(wc -l <"$out/bench.log" 2>/dev/null || echo 0) + 1))
	(cd gpuengine && run 150 "$out/bench.log" "$bin/gpuengine.test" -test.run '^$' -test.bench '^BenchmarkCUDAFusedTilings$' -test.benchtime 1x -test.timeout 140s)
	row "fused tilings (bench.log)" "$(outcome $?)" "$(bench_rows "$out/bench.log" "$from")"
fi

# 8. compute-sanitizer: racecheck and synccheck on the production shape and a resident
# one, and on the tf32x3 kernel (-test.short: a small bake).
if [ -x "$bin/gpuengine.test" ] && command -v compute-sanitizer >/dev/null; then
	for tool in racecheck synccheck; do
		for t in '^TestCUDABitIdenticalToCPUTwin$/^fused$/^W(256_D8|64_D3)$' '^TestCUDATF32x3Deterministic$'; do
			from=$(($(wc -l <"$tests") + 1))
			(cd gpuengine && run 90 "$tests" compute-sanitizer --tool "$tool" --error-exitcode 99 "$bin/gpuengine.test" -test.short -test.run "$t" -test.v -test.timeout 80s)
			rc=$?
			row "compute-sanitizer $tool $t" "$(outcome $rc)" "$(tail -n +"$from" "$tests" | grep -m1 'ERROR SUMMARY')"
		done
	done
else
	row "compute-sanitizer" "not run" "no test binary or no compute-sanitizer"
fi

# 9. Nsight Compute (last: it explains speed, the steps before prove bits) on one launch
# of each fused kernel at 256×8: where the issue slots go (the stall reasons), pipe use,
# occupancy. Clocks are left alone (ncu --clock-control none).
if [ -x "$bin/gpuengine.test" ] && command -v ncu >/dev/null; then
	for k in 'mlp_fused BenchmarkCUDAFused256x8' 'mlp_tf32x3 BenchmarkCUDATF32x3/W256_D8'; do
		set -- $k
		(cd gpuengine && run 60 "$probe" ncu --clock-control none -k "$1" --launch-skip 4 --launch-count 1 \
			--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats \
			"$bin/gpuengine.test" -test.run '^$' -test.bench "^$2\$" -test.benchtime 1x -test.timeout 50s)
		row "ncu $1" "$(outcome $?)" "probe.log"
	done
else
	row "ncu" "not run" "no test binary or no ncu"
fi

# The background rows (their jobs had the whole run to finish; the deadline's timeouts
# bound them).
wait "$vetpid" 2>/dev/null
cat "$bg/vet.log" >>"$build" 2>/dev/null
row "vet (cuda tag)" "$(outcome "$(cat "$bg/vet.rc" 2>/dev/null || echo 125)")" "build.log; go vet -tags cuda ./gpuengine/... ./internal/cli/"
if [ -n "${checkpid:-}" ]; then
	wait "$checkpid" 2>/dev/null
	row "NVRTC + ptxas, every shape" "$(outcome "$(cat "$bg/cudacheck.rc" 2>/dev/null || echo 125)")" "cudacheck.log: registers, spills, cubins"
fi

{
	echo
	echo "Total: $(elapsed)."
	if [ -s "$out/bench.log" ]; then
		echo
		echo '## Speed (bench.log)'
		echo
		grep -E '^\|' "$out/bench.log"
	fi
	if [ -s "$out/smi.csv" ]; then
		echo
		echo "Clocks during the bench (SM MHz min/median/max; power W max): $(awk -F', ' 'NR>1 && $2+0>0 {print $2+0, $4+0}' "$out/smi.csv" |
			sort -n | awk '{s[NR]=$1; if ($2>p) p=$2} END {if (NR) printf "%d / %d / %d; %.0f W", s[1], s[int((NR+1)/2)], s[NR], p}')"
	fi
	if grep -q 'σ_MC' "$tests" 2>/dev/null; then
		echo
		echo '## tf32x3 against fp32 (TestCUDATF32x3CloseToFP32)'
		echo
		grep -E 'largest deviation|avg_variance:' "$tests" | sed 's/^[[:space:]]*//'
	fi
} >>"$report"
rm -rf "$work"
cat "$report"
