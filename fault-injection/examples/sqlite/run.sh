#!/bin/sh
# The crash explorer on sqlite3 (docs/fault-injection.md, "sqlite3"): one transaction
# in journal_mode=DELETE with synchronous=FULL (or $1, e.g. EXTRA), recorded and
# explored under each model. Usage: run.sh [SYNCHRONOUS] (vxfault on PATH or $VXFAULT).
set -eu
sync=${1:-FULL}
vxfault=${VXFAULT:-vxfault}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
sqlite3 "$work/root/db" "PRAGMA journal_mode=DELETE; CREATE TABLE t(x INTEGER, pad TEXT);
  INSERT INTO t VALUES(1, printf('%.3000c','a'));" >/dev/null
"$vxfault" record --out "$work/rec" --root "$work/root" -- sqlite3 "$work/root/db" \
  "PRAGMA journal_mode=DELETE; PRAGMA synchronous=$sync; BEGIN;
   INSERT INTO t VALUES(2, printf('%.3000c','b'));
   UPDATE t SET pad=printf('%.3000c','c') WHERE x=1; COMMIT;" >/dev/null
"$vxfault" explore --log "$work/rec" --list | grep '^op'
status=0
for model in prefix posix ext4-ordered; do
  "$vxfault" explore --log "$work/rec" --model "$model" --check "$here/check.sh {root}" || status=1
done
exit $status
