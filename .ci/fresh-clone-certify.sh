#!/usr/bin/env bash
# Proves README's certify command on a clone with nothing built, and requires exit 0.
#
#   bash .ci/fresh-clone-certify.sh          clone HEAD into a temporary directory and
#                                            run the command there (its own target/,
#                                            removed on exit): for a developer's tree.
#   bash .ci/fresh-clone-certify.sh --here   run it in this checkout, which must be a
#                                            fresh clone: nothing changed, untracked or
#                                            ignored (so no target/ and nothing built),
#                                            and CARGO_TARGET_DIR unset. CI's checkout is
#                                            such a clone, and .ci/run calls this first,
#                                            so its later steps reuse what it built.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cmd="$(grep -m1 '^cargo certify ' "$repo/README.md")" || true
[ -n "$cmd" ] || {
  echo "$repo/README.md has no line starting with 'cargo certify ': add README's certify command" >&2
  exit 1
}

case "${1:-}" in
  --here)
    if [ -n "${CARGO_TARGET_DIR:-}" ]; then
      echo "fresh clone: CARGO_TARGET_DIR is set ($CARGO_TARGET_DIR); a fresh clone builds into its own target/: unset it" >&2
      exit 1
    fi
    # Anything untracked or ignored (target/, fuzz/target/, a report) means this tree
    # is not as cloned; a modified file means it is not HEAD.
    dirty="$(git -C "$repo" status --porcelain --ignored --untracked-files=normal)"
    if [ -n "$dirty" ]; then
      echo "fresh clone: $repo is not a fresh clone (nothing may be built, changed or added before this check):" >&2
      echo "$dirty" | head -20 >&2
      echo "fresh clone: run this first in a new clone, or without --here to make a temporary clone" >&2
      exit 1
    fi
    cd "$repo"
    ;;
  "")
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    git clone --quiet "$repo" "$work/kit"
    cd "$work/kit"
    # A fresh clone has its own target directory: nothing is prebuilt.
    unset CARGO_TARGET_DIR
    ;;
  *)
    echo "usage: $0 [--here]  (unknown argument: $1)" >&2
    exit 2
    ;;
esac
echo "fresh clone ($(pwd)): $cmd"
bash -c "$cmd"
test -s target/vxcert-report/report.json || {
  echo "fresh clone: '$cmd' exited 0 but wrote no target/vxcert-report/report.json" >&2
  exit 1
}
echo "fresh clone certify: pass"
