#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way the ClusterFuzzLite/OSS-Fuzz builder does,
# with SRC, OUT and WORK temporary directories and no container engine, then checks
# that every target's binary, seed corpus zip and dictionary landed in $OUT and that
# each binary runs one of its seeds (-runs=1).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work"
ln -s "$repo" "$tmp/src/venomx"
SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work" bash "$repo/.clusterfuzzlite/build.sh"

toolchain=()
cargo +nightly --version >/dev/null 2>&1 && toolchain=(+nightly)
targets=$(cd "$repo/fuzz" && cargo "${toolchain[@]}" fuzz list)
[ -n "$targets" ] || { echo "no fuzz targets listed"; exit 1; }
for t in $targets; do
  for f in "$t" "${t}_seed_corpus.zip" "$t.dict"; do
    [ -s "$tmp/out/$f" ] || { echo "missing in \$OUT: $f"; exit 1; }
  done
  [ -x "$tmp/out/$t" ] || { echo "not executable: $t"; exit 1; }
  seeds="$tmp/work/check-$t"
  mkdir -p "$seeds"
  python3 -m zipfile -e "$tmp/out/${t}_seed_corpus.zip" "$seeds"
  seed=$(find "$seeds" -type f | sort | sed -n 1p)
  [ -n "$seed" ] || { echo "empty seed corpus: $t"; exit 1; }
  "$tmp/out/$t" -runs=1 -dict="$tmp/out/$t.dict" "$seed" >"$tmp/work/$t.log" 2>&1 ||
    { cat "$tmp/work/$t.log"; echo "target $t failed on its seed"; exit 1; }
  echo "ok: $t ($(find "$seeds" -type f | wc -l) seeds)"
done
echo "ClusterFuzzLite build: $(echo "$targets" | wc -w) targets, each with seeds and a dictionary"
