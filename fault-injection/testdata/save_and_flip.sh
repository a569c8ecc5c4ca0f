#!/bin/bash
# A shell program that saves its state to a new file in DIR and points the symlink
# `last` at it, as many scripts do (no `set -e`: like them, it goes on when a write
# fails). `sync`: fsync the save before the flip; `sync-dir`: the save and DIR.
# Usage: save_and_flip.sh DIR [sync|sync-dir]; SAVE_LINES lines (default 20), then `end`.
cd "$1" || exit 1
f="save.$(date +%s%N)"
n="${SAVE_LINES:-20}"
{
    for i in $(seq 1 "$n"); do printf 'line %d of the saved state\n' "$i"; done
    echo end
} > "$f"
case "${2:-}" in
sync) sync "$f" ;;
sync-dir) sync "$f" . ;;
esac
ln -sf "$f" last
