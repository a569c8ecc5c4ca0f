#!/bin/sh
# The checker of publish_tool.sh's states: `tool`, when it exists, is executable and
# whole.
t="$1/tool"
[ -e "$t" ] || exit 0
[ -x "$t" ] || { echo "tool is published but not executable"; exit 1; }
tail -n 1 "$t" | grep -qx 'echo done' || { echo "tool is published incomplete"; exit 1; }
