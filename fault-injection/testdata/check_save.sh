#!/bin/sh
# The checker of save_and_flip.sh's states: `last`, when it exists, names a complete
# save (its last line is `end`).
r="$1"
[ -L "$r/last" ] || exit 0
t="$r/$(readlink "$r/last")"
[ -f "$t" ] || { echo "last points to a missing file"; exit 1; }
[ -s "$t" ] || { echo "last points to an empty file"; exit 1; }
tail -n 1 "$t" | grep -qx end || { echo "last points to an incomplete save"; exit 1; }
