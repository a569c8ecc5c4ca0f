#!/bin/sh
# The checker of a sqlite3 recording that committed row 2 over a database holding
# row 1: the database is intact and holds row 1 or both rows (the transaction is
# atomic). Durability is not asked: in rollback mode the commit is the journal's
# unlink, which sqlite3 does not follow with a directory fsync, so the posix model
# may lose it after the run ended. Usage: check_sqlite.sh SQLITE3 ROOT
r=$("$1" "$2/db" 'pragma integrity_check; select count(*) from t;' 2>&1 | tr '\n' ' ')
[ "$r" = 'ok 2 ' ] || [ "$r" = 'ok 1 ' ] && exit 0
echo "database: $r"
exit 1
