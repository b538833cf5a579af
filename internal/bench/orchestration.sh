#!/usr/bin/env bash
# Orchestration overhead and fan-out, measured on the local dev stack:
#  1. the demo bake (configs/demo.yaml) through Temporal vs the same work as local
#     `whestbake dataset bake` runs (same seeds, same shapes), wall time and ratio;
#  2. a 64-MLP bake (configs/bench-fanout.yaml) with 1 vs 2 GPU-role workers of one
#     CPU thread each, beside one control worker.
# Usage: make tools build && internal/bench/orchestration.sh   (leaves the dev stack up)
set -euo pipefail
cd "$(dirname "$0")/../.."
WB=bin/whestbake
W=bin/whestbake-worker
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
now() { date +%s.%N; }
$WB dev up >/dev/null
ts=$(date +%Y%m%d-%H%M%S)

# 1. Demo bake: local vs Temporal.
t0=$(now)
for s in "public 4 1 default" "holdout 3 2 holdout"; do
  set -- $s
  $WB dataset generate-seeds --n-mlps "$2" --seed "$3" --output "$tmp/$1-seeds.json"
  $WB dataset bake --n-mlps "$2" --width 64 --depth 4 --n-samples 200_000 --mlp-seeds "$tmp/$1-seeds.json" \
    --split "$1" --config "$4" --output "$tmp/$1" >/dev/null
done
$WB dataset combine-splits "$tmp/public" "$tmp/holdout" --output "$tmp/local" >/dev/null
t1=$(now)
$W --role all --config-file configs/demo.yaml >"$tmp/w-demo.log" 2>&1 & pids+=($!)
sleep 2
t2=$(now)
WHESTBAKE_RELEASE_TAG=bench-$ts $WB bake --config-file configs/demo.yaml --id bench-demo-$ts --wait >/dev/null
t3=$(now)
kill "${pids[@]}"; wait 2>/dev/null || true; pids=()
local_s=$(awk "BEGIN{print $t1 - $t0}"); temporal_s=$(awk "BEGIN{print $t3 - $t2}")
printf '| demo bake (7 MLPs, W=64 D=4 N=2e5) | local dataset bake+combine | %.1f s |\n' "$local_s"
printf '| demo bake (7 MLPs, W=64 D=4 N=2e5) | Temporal (worker --role all) | %.1f s (%.2f× local) |\n' "$temporal_s" "$(awk "BEGIN{print $temporal_s / $local_s}")"

# 2. Fan-out: 1 vs 2 GPU-role workers, one thread each.
for n in 1 2; do
  $W --role control --config-file configs/bench-fanout.yaml >"$tmp/w-control-$n.log" 2>&1 & pids+=($!)
  for i in $(seq "$n"); do
    $W --role gpu --threads 1 --config-file configs/bench-fanout.yaml >"$tmp/w-gpu-$n-$i.log" 2>&1 & pids+=($!)
  done
  sleep 2
  t0=$(now)
  $WB bake --config-file configs/bench-fanout.yaml --id bench-fanout-$n-$ts --wait >/dev/null
  t1=$(now)
  kill "${pids[@]}"; wait 2>/dev/null || true; pids=()
  printf '| 64 MLPs W=128 D=4 N=1e5, 16 slices | %d GPU-role worker(s) × 1 thread | %.1f s |\n' "$n" "$(awk "BEGIN{print $t1 - $t0}")"
done
