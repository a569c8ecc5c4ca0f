#!/bin/sh
# A shell program that installs an executable the way many do: write it under a
# temporary name, chmod it, rename it into place. `sync`: fsync the file (its bytes
# and its mode) and the directory before the rename.
# Usage: publish_tool.sh DIR [sync]
cd "$1" || exit 1
printf '#!/bin/sh\necho done\n' > tool.tmp
chmod 755 tool.tmp
[ "${2:-}" = sync ] && sync tool.tmp .
mv tool.tmp tool
