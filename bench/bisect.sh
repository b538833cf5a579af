#!/usr/bin/env bash
# Culprit search for one metric of the regression gate (docs/benchmarks.md):
#
#   bench/bisect.sh GOOD BAD METRIC
#
# METRIC is a regular expression on "workload / metric" as bench-check's
# table prints them, e.g. 'engine philox W=256 D=8 / speed vs numpy peer'.
# It first records GOOD's figures for METRIC on this machine (benchgate
# baseline, the repetitions giving the noise), then runs `git bisect run`
# between GOOD and BAD, where a commit is bad when `benchgate check` of
# METRIC fails against GOOD's figures; an A/B metric compares each commit
# with a build of GOOD. A commit that cannot be measured (no gate yet, a
# build that fails, a workload error) is skipped (exit 125), as bisect
# expects. The checkout is restored at the end. A ratio to the numpy peer is
# gated only against a baseline of this machine's class (docs/benchmarks.md),
# so for such a METRIC GOOD must record classes: at a GOOD from before them,
# every step is skipped.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 GOOD BAD METRIC" >&2
  exit 2
fi
cd "$(git rev-parse --show-toplevel)"
good=$(git rev-parse --verify "$1^{commit}")
bad=$(git rev-parse --verify "$2^{commit}")
metric=$3
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "bisect checks out commits: commit or stash your changes first" >&2
  exit 2
fi
orig=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
tmp=$(mktemp -d)
cleanup() {
  git bisect reset -q >/dev/null 2>&1 || true
  git checkout -q "$orig"
  rm -rf "$tmp"
}
trap cleanup EXIT

# The step lives outside the tree, since bisect visits commits that may not
# have this script. Exit 0 good, 1 bad, 125 skip.
cat >"$tmp/step.sh" <<'EOF'
#!/usr/bin/env bash
tmp=$1 good=$2 metric=$3
echo "=== $(git log -1 --format='%h %s')"
go build -o "$tmp/benchgate" ./internal/bench/cmd/benchgate >"$tmp/build.log" 2>&1 || { echo "no gate here: skip"; exit 125; }
rc=0
"$tmp/benchgate" check --baseline "$tmp/good.json" --ref "$good" --only "$metric" || rc=$?
case $rc in
  0) exit 0 ;;
  1) exit 1 ;;
  *) exit 125 ;;
esac
EOF

echo "=== recording $metric at GOOD $good"
git checkout -q "$good"
go build -o "$tmp/benchgate" ./internal/bench/cmd/benchgate
"$tmp/benchgate" baseline --baseline "$tmp/good.json" --only "$metric"
git bisect start "$bad" "$good"
git bisect run bash "$tmp/step.sh" "$tmp" "$good" "$metric"
echo
git bisect log | grep -E "^# first bad commit" || true
