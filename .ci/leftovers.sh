#!/usr/bin/env bash
# Lists every process of the kit or of an implementation under test that is still
# running, and exits 1 naming them (0 when there is none). .ci/run calls it after each
# step: nothing a step started may outlive it (issue 47).
#
# A process counts when it runs one of the kit's programs built in this checkout, when
# its command line runs a foreign peer (peers/), or when its environment, command line or working
# directory names a scenario sandbox ($VXCERT_SANDBOX_PARENT/vxc…, default /tmp/vxc…,
# where every implementation the kit starts has its HOME), or when it is an orphan
# (its parent is PID 1) whose working directory is inside this checkout (a test's
# daemon panes, which live in a tempfile directory, were left so). The S3 twins, the
# background fuzz build and this script's own ancestors are not the kit's leftovers
# and are never listed.
#
#   bash .ci/leftovers.sh [STEP]       STEP names the step in the message
set -uo pipefail
step="${1:-the step}"
kit_names=" vxref vxbroker vxpersist vxstub vxcert vxfault vxfault-probe "
repo="$(cd "$(dirname "$0")/.." && pwd)"
peers_dir="$repo/peers/"
sandboxes="${VXCERT_SANDBOX_PARENT:-/tmp}/vxc"

# This script's ancestors (the CI shell, its callers) are not leftovers.
ancestors=" "
p=$$
while [ -n "$p" ] && [ "$p" -gt 1 ]; do
  ancestors+="$p "
  p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || true)
done

# The S3 twins (.ci/s3-twins.sh) run from the checkout for the whole CI run.
twins=" "
twins_pids="${VXPERSIST_TWINS_STATE:-${TMPDIR:-/tmp}/vxpersist-s3-twins}/pids"
[ -f "$twins_pids" ] && twins+="$(tr '\n' ' ' <"$twins_pids") "

found=()
for d in /proc/[0-9]*; do
  pid=${d#/proc/}
  case "$ancestors" in *" $pid "*) continue ;; esac
  stat=$(cat "$d/stat" 2>/dev/null) || continue
  state=$(echo "${stat##*) }" | cut -d' ' -f1)
  [ "$state" = Z ] && continue
  comm=$(cat "$d/comm" 2>/dev/null) || continue
  cmdline=$({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null) || continue
  why=""
  # A kit program of this checkout (another checkout's run is not this run's).
  exe=$(readlink "$d/exe" 2>/dev/null || true)
  case "$kit_names" in *" $comm "*) [[ "$exe" == "$repo"/* ]] && why="a kit program" ;; esac
  if [ -z "$why" ]; then
    case "$cmdline" in *"$peers_dir"*) why="a foreign peer" ;; esac
  fi
  if [ -z "$why" ]; then
    cwd=$(readlink "$d/cwd" 2>/dev/null || true)
    if [[ "$cwd" == "$sandboxes"* ]] || [[ "$cmdline" == *" $sandboxes"* ]] ||
      { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qF "=$sandboxes"; then
      why="started in a scenario sandbox"
    elif [ "$(echo "${stat##*) }" | cut -d' ' -f2)" = 1 ] &&
      { [ "$cwd" = "$repo" ] || [[ "$cwd" == "$repo"/* ]]; }; then
      case "$twins" in *" $pid "*) ;; *) why="an orphan working in the checkout" ;; esac
    fi
  fi
  [ -n "$why" ] && found+=("pid $pid $comm ($why): ${cmdline:0:160}")
done

if [ ${#found[@]} -gt 0 ]; then
  echo "leftovers: ${#found[@]} process(es) outlived $step:" >&2
  printf '  %s\n' "${found[@]}" >&2
  exit 1
fi
echo "leftovers: none after $step"
