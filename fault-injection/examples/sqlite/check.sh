#!/bin/sh
# sqlite3 crash-state checker: PRAGMA integrity_check, and the committed row count:
# 1 or 2 while the transaction may be in flight, 2 once sqlite3 returned (the run
# completed: COMMIT was acknowledged).
db="$1/db"
ic=$(sqlite3 "$db" "PRAGMA integrity_check;" 2>&1)
[ "$ic" = "ok" ] || { echo "integrity_check: $ic" | head -1; exit 1; }
n=$(sqlite3 "$db" "SELECT count(*) FROM t;" 2>&1)
case "$n" in 1|2) ;; *) echo "row count $n"; exit 1;; esac
if [ "$VXFAULT_COMPLETE" = 1 ] && [ "$n" != 2 ]; then echo "acknowledged commit lost (rows $n)"; exit 1; fi
exit 0
