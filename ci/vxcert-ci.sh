#!/usr/bin/env bash
# The steps of ci/action.yml and ci/certify.yml, runnable anywhere (the kit's test
# harness/tests/shards_merge_diff.rs runs them locally the way a runner would).
#
#   vxcert-ci.sh shard K/N [vxcert run arguments…]  -> $VXCERT_OUT/shard-K-of-N/
#   vxcert-ci.sh merge                               -> $VXCERT_OUT/report/
#   vxcert-ci.sh diff BASELINE                       -> $VXCERT_OUT/diff/ (BASELINE: a
#                                                      report directory or report.json)
#
# VXCERT: the vxcert to run (default: vxcert on PATH). VXCERT_OUT: where reports go
# (default: vxcert-out). A shard step succeeds when its report was written, whatever
# its verdicts (the merge judges the whole run); a usage error (exit 2) fails it.
set -euo pipefail
vxcert=${VXCERT:-vxcert}
out=${VXCERT_OUT:-vxcert-out}
step=${1:?usage: vxcert-ci.sh shard K/N [args…] | merge | diff BASELINE}
shift
case "$step" in
shard)
    kn=${1:?shard K/N}
    shift
    k=${kn%/*}
    n=${kn#*/}
    mkdir -p "$out"
    status=0
    "$vxcert" run --quiet --shard "$k/$n" --report "$out/shard-$k-of-$n" "$@" || status=$?
    if [ "$status" -gt 1 ] || [ ! -f "$out/shard-$k-of-$n/report.json" ]; then
        echo "vxcert-ci: shard $k/$n wrote no report (exit $status)" >&2
        exit "$status"
    fi
    ;;
merge)
    shopt -s nullglob
    shards=("$out"/shard-*-of-*)
    if [ "${#shards[@]}" -eq 0 ]; then
        echo "vxcert-ci: no shard reports under $out" >&2
        exit 2
    fi
    # Exit 1 (the merged run failed) is the run's verdict, for the diff step to weigh.
    status=0
    "$vxcert" merge --report "$out/report" "${shards[@]}" || status=$?
    echo "$status" >"$out/merge-status"
    [ "$status" -le 1 ] || exit "$status"
    ;;
diff)
    baseline=${1:?diff BASELINE}
    if [ ! -e "$baseline" ]; then
        # No baseline yet: the merged run's own verdict decides.
        echo "vxcert-ci: no baseline at $baseline; the merged run's verdict decides" >&2
        exit "$(cat "$out/merge-status")"
    fi
    "$vxcert" diff "$baseline" "$out/report" --out "$out/diff"
    ;;
*)
    echo "vxcert-ci: unknown step $step (shard, merge, diff)" >&2
    exit 2
    ;;
esac
