#!/usr/bin/env bash
# ClusterFuzzLite / OSS-Fuzz build: every cargo-fuzz target with `cargo fuzz build -O`
# (plus debug assertions, as the brief CI run fuzzes them), and into $OUT each
# target's binary, its seed corpus `<target>_seed_corpus.zip` and its dictionary
# `<target>.dict`, as OSS-Fuzz's Rust guide lays them out.
# Inputs (set by the builder, or by hand): SRC (the repository is $SRC/venomx, or
# VENOMX_SRC), OUT, WORK.
set -euo pipefail
: "${OUT:?OUT must name the output directory}"
: "${WORK:?WORK must name a scratch directory}"
repo=${VENOMX_SRC:-${SRC:?SRC must name the source directory}/venomx}
cd "$repo"
# shellcheck source=../fuzz/targets.sh
source fuzz/targets.sh

toolchain=()
if [ -z "${CARGO_BUILD_TARGET:-}" ] && cargo +nightly --version >/dev/null 2>&1; then
  toolchain=(+nightly) # outside the builder image, which sets up nightly itself
fi
(cd fuzz && cargo "${toolchain[@]}" fuzz build -O --debug-assertions)
release=fuzz/target/x86_64-unknown-linux-gnu/release
targets=$(cd fuzz && cargo "${toolchain[@]}" fuzz list)
mkdir -p "$OUT"
for target in $targets; do
  cp "$release/$target" "$OUT/$target"
  seeds="$WORK/seeds-$target"
  rm -rf "$seeds"
  seed_corpus "$target" "$seeds"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$seeds" && python3 -m zipfile -c "$OUT/${target}_seed_corpus.zip" .)
  cp "$(target_dict "$target")" "$OUT/$target.dict"
done
echo "build.sh: $(echo "$targets" | wc -w) targets in $OUT"
