#!/usr/bin/env bash
# The fuzz regressions (fuzz/regressions/, written by fuzz/triage.sh): every stored
# input through its target's built binary, once, with its expected verdict in
# VX_FUZZ_EXPECT. Fails if a target crashes or a verdict differs. Uses the binaries
# of `cargo fuzz build` (run-brief.sh builds them first and calls this).
set -euo pipefail
cd "$(dirname "$0")/.."
release=fuzz/target/x86_64-unknown-linux-gnu/release
expected=fuzz/regressions/expected.jsonl
[ -s "$expected" ] || { echo "replay: no regressions"; exit 0; }
failed=0 count=0
while IFS=$'\t' read -r target file verdict; do
  count=$((count + 1))
  log=$(mktemp)
  if VX_FUZZ_EXPECT=$verdict "$release/$target" -runs=1 "fuzz/regressions/$target/$file" >"$log" 2>&1; then
    echo "replay ok: $target/$file ($verdict)"
  else
    grep -E 'panicked|assertion|left:|right:' "$log" | head -5
    echo "replay FAILED: $target/$file (want $verdict)"
    failed=$((failed + 1))
  fi
  rm -f "$log"
done < <(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        print(r["target"], r["file"], r["verdict"], sep="\t")' "$expected")
echo "replay: $count regressions, $failed failed"
[ "$failed" = 0 ]
