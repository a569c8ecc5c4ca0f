# What every fuzz target starts from: its seed corpus and its dictionary. Sourced by
# fuzz/run-brief.sh (the brief CI run) and .clusterfuzzlite/build.sh (ClusterFuzzLite
# and OSS-Fuzz), so both give a target the same seeds and tokens.
# Paths are relative to the repository root.

# seed_corpus TARGET DIR: copies TARGET's seeds from corpus/ into DIR.
seed_corpus() {
  local target=$1 dir=$2
  mkdir -p "$dir"
  case $target in
    # Structure-aware targets read `arbitrary` bytes: their seeds are such bytes.
    format_rules | persist_blob_rules) cp fuzz/seeds/"$target"/* "$dir" ;;
    format_*)
      # Every fixture has its checkpoint's file name; name seeds after their case.
      find corpus/checkpoints -name '*.json' -size -64k -print0 |
        while IFS= read -r -d '' f; do
          cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
        done ;;
    json_differential)
      # Strict JSON texts of every kind: checkpoints (envelope and payload) and frames.
      find corpus/checkpoints -name '*.json' -size -64k -print0 |
        while IFS= read -r -d '' f; do
          cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
        done
      cp corpus/wire/*.json "$dir" ;;
    tar_differential)
      find corpus/persist/blobs -name '*.tar' -size -64k -exec cp {} "$dir" \;
      cp fuzz/seeds/persist_blob/*.tar "$dir" ;;
    wire_*) cp -r corpus/wire/. "$dir" ;;
    attach_*) cp -r corpus/attach/. "$dir" ;;
    zon_*) cp -r corpus/config/. "$dir" ;;
    # The 16 MiB cases are padded at check time; their committed seeds are small.
    workspace_*) find corpus/workspace -maxdepth 1 -name '*.json' -size -64k -exec cp {} "$dir" \; ;;
    agent_record) cp corpus/workspace/records/*.json "$dir" ;;
    integration_*) cp corpus/integrations/*.toml "$dir" ;;
    broker_key) cp corpus/broker/keys/*.key "$dir" ;;
    broker_resume_plan) cp corpus/broker/resume/*.txt "$dir" ;;
    broker_frames) cp corpus/broker/frames/*.json "$dir" ;;
    # Sidecar seeds share file names, so name them after their case directory.
    broker_alias_sidecar | broker_owner_file)
      local pattern='aliases.json'
      [ "$target" = broker_owner_file ] && pattern='*.owner'
      find corpus/broker/sidecar -name "$pattern" -print0 |
        while IFS= read -r -d '' f; do
          cp "$f" "$dir/$(basename "$(dirname "$f")")"
        done ;;
    persist_provenance) cp fuzz/seeds/persist_provenance/* "$dir" ;;
    persist_checkpoint) cp fuzz/seeds/persist_checkpoint/*.json "$dir" ;;
    persist_blob)
      find corpus/persist/blobs -name '*.tar' -size -64k -exec cp {} "$dir" \;
      # Valid blobs with PAX records the corpus does not carry (an `mtime`).
      cp fuzz/seeds/persist_blob/*.tar "$dir" ;;
    *) echo "fuzz/targets.sh: no seeds for fuzz target $target" >&2; return 1 ;;
  esac
  # Every regression fuzz/triage.sh stored is a seed too.
  if [ -d "fuzz/regressions/$target" ]; then
    cp fuzz/regressions/"$target"/* "$dir"
  fi
  return 0
}

# target_dict TARGET: prints the path of TARGET's libFuzzer dictionary.
target_dict() {
  case $1 in
    format_* | persist_checkpoint | json_*) echo corpus/fuzz/checkpoint.dict ;;
    workspace_* | agent_* | integration_*) echo corpus/fuzz/agent-session.dict ;;
    broker_*) echo corpus/broker/broker.dict ;;
    wire_* | attach_*) echo corpus/fuzz/wire.dict ;;
    zon_*) echo corpus/fuzz/zon.dict ;;
    persist_* | tar_*) echo corpus/fuzz/persist.dict ;;
    *) echo "fuzz/targets.sh: no dictionary for fuzz target $1" >&2; return 1 ;;
  esac
}
