#!/usr/bin/env bash
# Proves README's certify command on a fresh clone: clone HEAD into a temporary
# directory, run the command exactly as README writes it, require exit 0.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cmd="$(grep -m1 '^cargo certify ' "$repo/README.md")"
[ -n "$cmd" ] || { echo "README has no 'cargo certify' command" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/kit"
cd "$work/kit"
# A fresh clone has its own target directory: nothing is prebuilt.
unset CARGO_TARGET_DIR
echo "fresh clone: $cmd"
bash -c "$cmd"
test -s target/vxcert-report/report.json
echo "fresh clone certify: pass"
