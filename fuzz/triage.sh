#!/usr/bin/env bash
# Turns a crash (or a verdict disagreement) into a regression, with one command:
#
#   bash fuzz/triage.sh TARGET INPUT [NAME]
#
# 1. minimises INPUT while it still crashes TARGET (libFuzzer -minimize_crash=1; an
#    input that no longer crashes is kept as it is);
# 2. stores it as fuzz/regressions/TARGET/NAME (NAME defaults to the first 12 hex
#    digits of its SHA-256), so it is also one of TARGET's seeds;
# 3. records its expected verdict in fuzz/regressions/expected.jsonl: the verdict the
#    reader gives it now (`accepted`, `refused <rule>`, or `passes` for the oracles
#    without one; see fuzz/src/verdict.rs), which you correct by hand if the fix is to
#    change it.
# fuzz/replay.sh (run by run-brief.sh, so by CI) then runs every stored input through
# its target with VX_FUZZ_EXPECT set: the target must not crash and the verdict must
# be the expected one. Fix the reader, rerun `bash fuzz/replay.sh`, commit all three.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
target=$1 input=$(realpath "$2") name=${3:-}
cd "$(dirname "$0")/.."
toolchain=()
cargo +nightly --version >/dev/null 2>&1 && toolchain=(+nightly)
# run-brief.sh's build (BUILD=0 reuses the binary there is).
if [ "${BUILD:-1}" = 1 ]; then
  (cd fuzz && cargo "${toolchain[@]}" fuzz build -O --debug-assertions "$target")
fi
bin=fuzz/target/x86_64-unknown-linux-gnu/release/$target
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$bin" -runs=1 "$input" >"$tmp/run.log" 2>&1; then
  echo "triage: $target does not crash on $input; storing it unminimised"
  cp "$input" "$tmp/min"
else
  grep -m3 -E 'panicked|ERROR|SUMMARY' "$tmp/run.log" || true
  "$bin" -minimize_crash=1 -runs=20000 -exact_artifact_path="$tmp/min" "$input" \
    >"$tmp/min.log" 2>&1 || true
  [ -s "$tmp/min" ] || cp "$input" "$tmp/min"
  echo "triage: minimised $(stat -c %s "$input") -> $(stat -c %s "$tmp/min") bytes"
fi
[ -n "$name" ] || name=$(sha256sum "$tmp/min" | cut -c1-12)
mkdir -p "fuzz/regressions/$target"
cp "$tmp/min" "fuzz/regressions/$target/$name"
# The verdict is the reader's; printing it must not depend on the oracle passing.
# The input still crashes the unfixed target: its exit status is not the verdict.
verdict=$({ VX_FUZZ_PRINT_VERDICT=1 "$bin" -runs=1 "fuzz/regressions/$target/$name" 2>&1 || true; } |
  sed -n 's/^vx-fuzz verdict: //p' | head -1)
python3 - "$target" "$name" "$verdict" <<'PY'
import json, sys
target, name, verdict = sys.argv[1:]
path = "fuzz/regressions/expected.jsonl"
try:
    rows = [json.loads(l) for l in open(path) if l.strip()]
except FileNotFoundError:
    rows = []
rows = [r for r in rows if (r["target"], r["file"]) != (target, name)]
rows.append({"target": target, "file": name, "verdict": verdict})
rows.sort(key=lambda r: (r["target"], r["file"]))
with open(path, "w") as f:
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
echo "triage: fuzz/regressions/$target/$name, expected verdict: $verdict"
echo "triage: now fix the reader until 'bash fuzz/replay.sh' passes, and commit both"
