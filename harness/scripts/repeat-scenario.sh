#!/usr/bin/env bash
# Runs one scenario many times to show it is not flaky:
#   harness/scripts/repeat-scenario.sh N TAG-EXPR SCENARIO-NAME-PREFIX [vxcert run args…]
# e.g. harness/scripts/repeat-scenario.sh 100 @rfc-8-retention-config "Count pruning"
# Each round runs `vxcert run --tags TAG-EXPR` and reads that scenario's verdict from
# report.json; the last line counts the rounds it passed.
set -euo pipefail
n=$1 tags=$2 name=$3
shift 3
root="$(cd "$(dirname "$0")/../.." && pwd)"
vxcert="${VXCERT:-$root/target/debug/vxcert}"
report="$(mktemp -d)"
trap 'rm -rf "$report"' EXIT
pass=0
for i in $(seq 1 "$n"); do
  "$vxcert" run --quiet --tags "$tags" --report "$report" "$@" >/dev/null 2>&1 || true
  v=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(" ".join(s["verdict"] for s in r["scenarios"] if s["name"].startswith(sys.argv[2])) or "missing")' \
    "$report/report.json" "$name")
  if [ "$v" = pass ]; then pass=$((pass + 1)); else echo "round $i: $v"; fi
done
echo "$name: passed $pass of $n rounds"
