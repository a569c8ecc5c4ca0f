#!/usr/bin/env bash
# Line and branch coverage of each reader crate by its fuzz targets' corpora:
# `cargo fuzz coverage` runs every input of fuzz/corpus/<target> plus its seeds through
# an instrumented build, the profiles of one crate's targets are merged, and
# `llvm-cov report` counts that crate's sources only. Run after a fixed campaign,
# e.g. `bash fuzz/night.sh --seconds 600 --cores N` (10 minutes per target):
#
#   bash fuzz/coverage.sh [CRATE...]     CRATE: format persist broker agentsession daemon
#
# Writes fuzz/coverage/<crate>.txt (llvm-cov's per-file report) and prints one row per
# crate; fuzz/coverage/<crate>-uncovered.txt lists the functions no input reached.
# Needs `rustup component add --toolchain nightly llvm-tools-preview`.
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/targets.sh
crates=("$@")
[ ${#crates[@]} -gt 0 ] || crates=(format persist broker agentsession daemon)
llvm=$(rustc +nightly --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin
nice=${NICE:-19}
targets_of() {
  case $1 in
    format) echo format_reader format_roundtrip format_rules json_differential ;;
    persist) echo persist_blob persist_checkpoint persist_provenance persist_blob_rules tar_differential ;;
    broker) echo broker_key broker_resume_plan broker_frames broker_alias_sidecar broker_owner_file ;;
    agentsession) echo workspace_archive agent_record integration_template ;;
    daemon) echo wire_frame zon_config attach_frames ;;
  esac
}
# The daemon crate is far more than its readers: count the files the targets read.
sources_of() {
  case $1 in
    daemon) echo reference/daemon/src/wire.rs reference/daemon/src/strict_json.rs \
      reference/daemon/src/config reference/daemon/src/attach/frame.rs ;;
    *) echo "reference/$1/src" ;;
  esac
}
mkdir -p fuzz/coverage
cov=fuzz/target/x86_64-unknown-linux-gnu/coverage/x86_64-unknown-linux-gnu/release
echo "| crate | targets | lines | branches | functions |"
echo "|---|---|---|---|---|"
for crate in "${crates[@]}"; do
  profiles=() objects=()
  for t in $(targets_of "$crate"); do
    seed_corpus "$t" "fuzz/corpus/$t" >/dev/null
    (cd fuzz && RUSTFLAGS="${RUSTFLAGS:-} -Zcoverage-options=branch" nice -n "$nice" \
      cargo +nightly fuzz coverage "$t" "corpus/$t" >"coverage/$t.log" 2>&1) ||
      { tail -20 "fuzz/coverage/$t.log"; exit 1; }
    profiles+=("fuzz/coverage/$t/coverage.profdata")
    objects+=(-object "$cov/$t")
  done
  "$llvm/llvm-profdata" merge -sparse "${profiles[@]}" -o "fuzz/coverage/$crate.profdata"
  # The first binary is positional, the others are -object.
  # shellcheck disable=SC2046
  "$llvm/llvm-cov" report "${objects[@]:1}" \
    -instr-profile="fuzz/coverage/$crate.profdata" $(sources_of "$crate") \
    >"fuzz/coverage/$crate.txt"
  # Functions of the crate's sources that no input reached, demangled.
  # shellcheck disable=SC2046
  "$llvm/llvm-cov" export -format=text -skip-expansions "${objects[@]:1}" \
    -instr-profile="fuzz/coverage/$crate.profdata" $(sources_of "$crate") |
    python3 -c '
import json, os, sys
roots = tuple(os.path.abspath(s) for s in sys.argv[1:])
seen = set()
for f in json.load(sys.stdin)["data"][0]["functions"]:
    name, file = f["name"], f["filenames"][0]
    if f["count"] == 0 and file.startswith(roots) and name not in seen:
        seen.add(name)
        print(name, os.path.relpath(file), f["regions"][0][0], sep="\t")' $(sources_of "$crate") |
    sort -u | { command -v llvm-cxxfilt >/dev/null && llvm-cxxfilt || cat; } \
    >"fuzz/coverage/$crate-uncovered.txt"
  total=$(grep '^TOTAL' "fuzz/coverage/$crate.txt")
  # TOTAL regions missed cover functions missed exec lines missed cover branches missed cover
  read -r -a f <<<"$total"
  echo "| $crate | $(targets_of "$crate" | wc -w) | ${f[9]} of ${f[7]} | ${f[12]} of ${f[10]} | ${f[6]} of ${f[4]} |"
done
