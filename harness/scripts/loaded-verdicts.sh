#!/usr/bin/env bash
# Verdicts under load (issue 47): runs the reference's certification and the foreign
# peers' test (each honest peer certifies, each planted violation fails exactly its
# scenarios) N times while CPU burners keep every core busy, FACTOR burners per core
# (default 2: 2x oversubscribed), and counts the repetitions whose verdicts differ
# from the quiet run's. The quiet verdicts are what the kit's tests require: exit 0
# of `vxcert run` on the reference, and `cargo test -p vxcert --test peers` passing.
#
#   bash harness/scripts/loaded-verdicts.sh N [FACTOR]
#
# Prints one line per repetition and a summary "flips: K of N"; exits 1 when any
# repetition flipped. Burners are killed on exit, whatever ends the script.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=${1:?usage: loaded-verdicts.sh N [FACTOR]}
factor=${2:-2}
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_TEST_DEBUG=line-tables-only
cargo build -q -p vxref -p vxfault-preload -p vx-persist -p vx-broker -p vxcert --bins || exit 2
cargo test -q -p vxcert --test peers --no-run || exit 2
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

burners=()
stop_burners() {
  [ ${#burners[@]} -gt 0 ] && kill "${burners[@]}" 2>/dev/null
  burners=()
}
trap stop_burners EXIT
for _ in $(seq $(($(nproc) * factor))); do
  (while :; do :; done) &
  burners+=($!)
done
echo "loaded-verdicts: ${#burners[@]} burners on $(nproc) cores, $n repetitions"

flips=0
for i in $(seq "$n"); do
  start=$(date +%s)
  report=$(mktemp -d)
  "$target_dir/debug/vxcert" run --quiet --report "$report" >"$report/stdout" 2>&1
  ref=$?
  cargo test -q -p vxcert --test peers >"$report/peers.log" 2>&1
  peers=$?
  took=$(($(date +%s) - start))
  if [ "$ref" -eq 0 ] && [ "$peers" -eq 0 ]; then
    echo "repetition $i: quiet verdicts (${took} s)"
    rm -rf "$report"
  else
    flips=$((flips + 1))
    echo "repetition $i: FLIPPED (reference exit $ref, peers test exit $peers; kept in $report) (${took} s)"
    grep -h "PROBLEM" "$report/stdout" | head -5
    grep -h "panicked\|failing\|is .*, not fail" "$report/peers.log" | head -5
  fi
done
echo "flips: $flips of $n (${#burners[@]} burners on $(nproc) cores)"
[ "$flips" -eq 0 ]
