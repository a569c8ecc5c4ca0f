#!/usr/bin/env bash
# Measures fuzz targets' speed: each target RUNS times, one process at a time, each
# run from a fresh copy of its committed seeds (fuzz/targets.sh) with its dictionary
# and a fixed libFuzzer seed, for EXECS executions (initial corpus included); the
# speed is executions per CPU-second of the process (user + system), so a machine
# shared with other work measures what a quiet core would, and the median of the
# runs is printed. On a quiet machine the wall-clock figure libFuzzer prints
# (stat::average_exec_per_sec) is the same number.
#
#   bash fuzz/throughput.sh [TARGET...]        (default: every target)
#   EXECS=50000 RUNS=3 NICE=19 BUILD=1          (defaults; BUILD=0 reuses the binaries)
#   SECONDS_PER_RUN=60                          each run fuzzes this long instead of EXECS
#                                               executions (the issue's method: start-up
#                                               and the seeds' first pass weigh less)
#   KEEP_CORPUS=1                               adds each run's grown corpus to
#                                               fuzz/corpus/<target> (a campaign of RUNS
#                                               runs per target, for fuzz/coverage.sh)
#   BIN_DIR=DIR                                 the binaries to measure (default: the build)
#   BEFORE=DIR                                  also measures DIR's binaries, interleaved
#                                               run by run (before, after, before, ...)
#
# Builds with `cargo fuzz build -O` (what `cargo fuzz run -O` runs: release, no debug
# assertions, AddressSanitizer). Prints one markdown row per target; logs in
# fuzz/throughput/<target>-<which>-<n>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/targets.sh
execs=${EXECS:-50000}
limit=(-runs="$execs")
what="$execs executions"
if [ -n "${SECONDS_PER_RUN:-}" ]; then
  limit=(-max_total_time="$SECONDS_PER_RUN")
  what="${SECONDS_PER_RUN} s"
fi
runs=${RUNS:-3}
nice=${NICE:-19}
toolchain=()
cargo +nightly --version >/dev/null 2>&1 && toolchain=(+nightly)
if [ "${BUILD:-1}" = 1 ]; then
  (cd fuzz && nice -n "$nice" cargo "${toolchain[@]}" fuzz build -O)
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$(cd fuzz && cargo "${toolchain[@]}" fuzz list | tr '\n' ' ')"
after=${BIN_DIR:-fuzz/target/x86_64-unknown-linux-gnu/release}
before=${BEFORE:-}
mkdir -p fuzz/throughput
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run_once BIN TARGET N LOG: prints executions per CPU-second and wall exec/s.
run_once() {
  local bin=$1 target=$2 n=$3 log=$4 cpu done_execs
  rm -rf "$scratch/corpus"
  seed_corpus "$target" "$scratch/corpus"
  TIMEFORMAT='%U %S'
  cpu=$({ time nice -n "$nice" "$bin" "${limit[@]}" -seed="$n" -print_funcs=0 \
    -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$scratch/" \
    -dict="$(target_dict "$target")" "$scratch/corpus" >"$log" 2>&1; } 2>&1) || return 1
  done_execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ "${KEEP_CORPUS:-0}" = 1 ]; then
    mkdir -p "fuzz/corpus/$target"
    cp -n "$scratch/corpus/"* "fuzz/corpus/$target/" 2>/dev/null || true
  fi
  awk -v e="$done_execs" -v c="$cpu" 'BEGIN { split(c, t, " "); printf "%d ", e / (t[1] + t[2]) }'
  sed -n 's/^stat::average_exec_per_sec: *//p' "$log"
}

median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

if [ -n "$before" ]; then
  echo "| target | before: exec per CPU-second ($runs runs of $what) | before median | after | after median | after / before |"
  echo "|---|---|---|---|---|---|"
else
  echo "| target | exec per CPU-second ($runs runs of $what) | median | wall exec/s (median) |"
  echo "|---|---|---|---|"
fi
for target in "${targets[@]}"; do
  rates=() walls=() brates=()
  for n in $(seq 1 "$runs"); do
    if [ -n "$before" ]; then
      read -r r _ < <(run_once "$before/$target" "$target" "$n" "fuzz/throughput/$target-before-$n.log") ||
        { echo "| $target | before failed: fuzz/throughput/$target-before-$n.log |"; continue 2; }
      brates+=("$r")
    fi
    read -r r w < <(run_once "$after/$target" "$target" "$n" "fuzz/throughput/$target-$n.log") ||
      { echo "| $target | failed: fuzz/throughput/$target-$n.log |"; continue 2; }
    rates+=("$r") walls+=("$w")
  done
  if [ -n "$before" ]; then
    b=$(median "${brates[@]}") a=$(median "${rates[@]}")
    echo "| \`$target\` | ${brates[*]} | $b | ${rates[*]} | **$a** | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') |"
  else
    echo "| \`$target\` | ${rates[*]} | **$(median "${rates[@]}")** | $(median "${walls[@]}") |"
  fi
done
