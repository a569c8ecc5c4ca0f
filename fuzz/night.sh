#!/usr/bin/env bash
# A night of fuzzing, as users run it: every target (or those named) for a chosen
# time, CORES processes at a time, each from its grown corpus in fuzz/corpus/<target>
# plus its committed seeds, with its dictionary; crashes, timeouts and OOMs are kept
# as artifacts and the run goes on (-fork=1 -ignore_crashes=1). Afterwards each
# corpus is merged (minimised to the inputs that add coverage, -merge=1) and a summary
# is written to fuzz/night/summary.md: executions, exec/s, coverage and corpus at the
# start and the end, new inputs, and every crash artifact.
#
#   bash fuzz/night.sh [--hours H | --seconds S] [--cores N] [TARGET...]
#     --hours H    the whole night's wall-clock time (default 8); each target gets
#                  H*3600*N/targets seconds
#     --seconds S  each target's time instead
#     --cores N    processes at a time (default: nproc)
#   NICE=19 (default 10) lowers their priority; BUILD=0 reuses the built targets.
#
# The binaries are `cargo fuzz build -O --debug-assertions` (run-brief.sh's build).
# Turn a crash into a regression with fuzz/triage.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/targets.sh
hours=8 seconds="" cores=$(nproc) targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --hours) hours=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "night.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
nice=${NICE:-10}
toolchain=()
cargo +nightly --version >/dev/null 2>&1 && toolchain=(+nightly)
if [ "${BUILD:-1}" = 1 ]; then
  (cd fuzz && nice -n "$nice" cargo "${toolchain[@]}" fuzz build -O --debug-assertions)
fi
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$(cd fuzz && cargo "${toolchain[@]}" fuzz list | tr '\n' ' ')"
if [ -z "$seconds" ]; then
  seconds=$(awk -v h="$hours" -v n="$cores" -v t="${#targets[@]}" 'BEGIN { printf "%d", h * 3600 * n / t }')
fi
release=fuzz/target/x86_64-unknown-linux-gnu/release
out=fuzz/night
mkdir -p "$out"
touch "$out/.start"
echo "night: ${#targets[@]} targets, ${seconds}s each, $cores at a time (logs in $out/)"

# count DIR: files in DIR (0 when absent).
count() { find "$1" -type f 2>/dev/null | wc -l; }

# night_one TARGET: seeds into its corpus, the run, the merge; facts in $out/TARGET.facts.
night_one() {
  local target=$1 corpus=fuzz/corpus/$1 artifacts=fuzz/artifacts/$1
  seed_corpus "$target" "$corpus"
  mkdir -p "$artifacts"
  local before crashes_before
  before=$(count "$corpus")
  crashes_before=$(count "$artifacts")
  nice -n "$nice" "$release/$target" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    -dict="$(target_dict "$target")" "$corpus" >"$out/$target.log" 2>&1 || true
  local merged=$corpus.merge
  rm -rf "$merged" && mkdir -p "$merged"
  if nice -n "$nice" "$release/$target" -merge=1 -rss_limit_mb=2048 -timeout=10 \
    "$merged" "$corpus" >"$out/$target.merge.log" 2>&1; then
    rm -rf "$corpus" && mv "$merged" "$corpus"
  else
    rm -rf "$merged" # keep the unmerged corpus
  fi
  # The first and the last status line of the fork runner: #runs, cov, ft, corp, exec/s.
  local first last
  first=$(grep -m1 -E '^#[0-9]+: cov: ' "$out/$target.log" || true)
  last=$(grep -E '^#[0-9]+: cov: ' "$out/$target.log" | tail -1 || true)
  field() { sed -n "s|.*$1: \([0-9]*\).*|\1|p" <<<"$2"; }
  {
    echo "execs=$(sed -n 's/^#\([0-9]*\): cov: .*/\1/p' <<<"$last")"
    echo "exec_s=$(field 'exec/s' "$last")"
    echo "cov_start=$(field cov "$first") cov_end=$(field cov "$last")"
    echo "ft_start=$(field ft "$first") ft_end=$(field ft "$last")"
    echo "corpus_before=$before corpus_after=$(count "$corpus")"
    echo "new_crashes=$(($(count "$artifacts") - crashes_before))"
  } >"$out/$target.facts"
}

running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$cores" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  night_one "$target" &
  running=$((running + 1))
done
wait

summary=$out/summary.md
{
  echo "# Fuzzing night, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  echo "${#targets[@]} targets, ${seconds} s each, $cores at a time (\`fuzz/night.sh\`)."
  echo
  echo "| target | executions | exec/s | coverage (edges) start → end | features start → end | corpus before → after merge | new crash artifacts |"
  echo "|---|---|---|---|---|---|---|"
  for target in "${targets[@]}"; do
    execs="" exec_s="" cov_start="" cov_end="" ft_start="" ft_end="" corpus_before="" corpus_after="" new_crashes=""
    eval "$(tr ' ' '\n' <"$out/$target.facts")"
    echo "| \`$target\` | $execs | $exec_s | $cov_start → $cov_end | $ft_start → $ft_end | $corpus_before → $corpus_after | $new_crashes |"
  done
  echo
  found=$(find fuzz/artifacts -type f -newer "$out/.start" 2>/dev/null | sort || true)
  if [ -n "$found" ]; then
    echo "Artifacts (turn each into a regression with \`bash fuzz/triage.sh TARGET FILE\`):"
    echo "$found" | sed 's/^/- /'
  else
    echo "No crash, timeout or OOM artifact."
  fi
} >"$summary"
cat "$summary"
