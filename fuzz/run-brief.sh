#!/usr/bin/env bash
# Runs every fuzz target briefly (CI). For an overnight run use, per target:
#   cargo +nightly fuzz run format_reader fuzz/corpus/format_reader corpus/checkpoints \
#     -- -dict=corpus/fuzz/checkpoint.dict -max_total_time=28800 -rss_limit_mb=2048
# SECONDS_PER_TARGET overrides the brief run's length (default 20). Each target's
# seeds and dictionary are in fuzz/targets.sh (fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# Seeds and dictionaries per target, shared with .clusterfuzzlite/build.sh.
source fuzz/targets.sh
cd fuzz
secs=${SECONDS_PER_TARGET:-20}

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

for target in $(cargo "${toolchain[@]}" fuzz list); do
  (cd .. && seed_corpus "$target" "fuzz/corpus/$target")
  dict=(-dict="../$(target_dict "$target")")
  echo "== fuzz $target (${secs}s)"
  set +e
  cargo "${toolchain[@]}" fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 "${dict[@]}" \
    > "fuzz-$target.log" 2>&1
  status=$?
  set -e
  grep -E '^(stat::|INFO: Running|.*(ERROR|panicked|SUMMARY|Done))' "fuzz-$target.log" || true
  if [ "$status" -ne 0 ]; then
    # The whole log: the panic message and the artifact to reproduce it with.
    cat "fuzz-$target.log"
    echo "fuzz target $target failed (exit $status)"
    exit 1
  fi
done
