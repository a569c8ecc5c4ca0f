#!/usr/bin/env bash
# Runs every fuzz target briefly (CI). For an overnight run:
#   bash fuzz/night.sh --hours 8 --cores "$(nproc)"   (fuzz/README.md, "A night")
# SECONDS_PER_TARGET overrides the brief run's length (default 8: a smoke check that
# each target builds, replays its seeds and corpus and survives a short mutation; the
# depth is the night's, and two cores give CI 80 s for 20 targets); FUZZ_JOBS how many
# targets run at once (default: the number of cores), each on its own core for its
# whole time. Each target's seeds and dictionary are in fuzz/targets.sh (fuzz/README.md).
#
#   bash fuzz/run-brief.sh --build-only   only build the targets (CI starts this early,
#                                         in the background, at idle priority)
#
# The targets are built once, with the flags `cargo fuzz run` uses (release, debug
# assertions, AddressSanitizer: `cargo fuzz build -O --debug-assertions`), the same
# build .clusterfuzzlite/build.sh makes, so its check reuses it; the brief runs start
# the built binaries as `cargo fuzz run` would.
set -euo pipefail
cd "$(dirname "$0")/.."
# Seeds and dictionaries per target, shared with .clusterfuzzlite/build.sh.
source fuzz/targets.sh
cd fuzz
secs=${SECONDS_PER_TARGET:-8}
jobs=${FUZZ_JOBS:-$(nproc)}
case "${1:-}" in
  "" | --build-only) ;;
  *) echo "usage: $0 [--build-only]  (unknown argument: $1)" >&2; exit 2 ;;
esac

# cargo-fuzz needs nightly flags; use the nightly toolchain when the machine has
# one, else let the stable compiler accept them.
if cargo +nightly --version >/dev/null 2>&1; then
  toolchain=(+nightly)
else
  toolchain=()
  export RUSTC_BOOTSTRAP=1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

cargo "${toolchain[@]}" fuzz build -O --debug-assertions
[ "${1:-}" = --build-only ] && exit 0
release=target/x86_64-unknown-linux-gnu/release

# The stored fuzz regressions (fuzz/triage.sh) first: each input once, with its
# expected verdict; a crash or another verdict fails the run.
bash replay.sh

# run_one TARGET: seeds, then SECONDS_PER_TARGET of fuzzing; its log in fuzz-TARGET.log.
run_one() {
  local target=$1
  (cd .. && seed_corpus "$target" "fuzz/corpus/$target")
  mkdir -p "artifacts/$target"
  "$release/$target" -artifact_prefix="artifacts/$target/" -max_total_time="$secs" \
    -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
    -dict="../$(target_dict "$target")" "corpus/$target" >"fuzz-$target.log" 2>&1
}

targets=$(cargo "${toolchain[@]}" fuzz list)
echo "== fuzz: $(echo "$targets" | wc -w) targets, ${secs}s each, $jobs at a time"
running=0
for target in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  rm -f "fuzz-$target.status"
  # The exit status goes to a file: `wait -n` has already reaped some of the jobs.
  (set +e; run_one "$target"; echo $? >"fuzz-$target.status") &
  running=$((running + 1))
done
wait
failed=()
for target in $targets; do
  status=$(cat "fuzz-$target.status" 2>/dev/null || echo "no status")
  echo "== fuzz $target (${secs}s)"
  grep -E '^(stat::|INFO: Running|.*(ERROR|panicked|SUMMARY|Done))' "fuzz-$target.log" || true
  if [ "$status" != 0 ]; then
    # The whole log: the panic message and the artifact to reproduce it with.
    cat "fuzz-$target.log"
    echo "fuzz target $target failed (exit $status)"
    failed+=("$target")
  fi
  rm -f "fuzz-$target.status"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets failed: ${failed[*]}"
  exit 1
fi
