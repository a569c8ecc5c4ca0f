#!/usr/bin/env bash
# Runs every fuzz target briefly (CI). For an overnight run use, per target:
#   cargo +nightly fuzz run format_reader fuzz/corpus/format_reader corpus/checkpoints \
#     -- -dict=corpus/fuzz/checkpoint.dict -max_total_time=28800 -rss_limit_mb=2048
# SECONDS_PER_TARGET overrides the brief run's length (default 20). The
# agent-session targets (workspace_archive, agent_record, integration_template)
# take -dict=../corpus/fuzz/agent-session.dict.
set -euo pipefail
cd "$(dirname "$0")"
secs=${SECONDS_PER_TARGET:-20}

# cargo-fuzz needs nightly flags; use the nightly toolchain when the machine has
# one, else let the stable compiler accept them.
if cargo +nightly --version >/dev/null 2>&1; then
  toolchain=(+nightly)
else
  toolchain=()
  export RUSTC_BOOTSTRAP=1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

seed_corpus() {
  # Seeds: every checkpoint fixture small enough to be a useful fuzz input.
  local target=$1 dir=corpus/$1
  mkdir -p "$dir"
  case $target in
    format_*)
      # Every fixture has its checkpoint's file name; name seeds after their case.
      find ../corpus/checkpoints -name '*.json' -size -64k -print0 |
        while IFS= read -r -d '' f; do
          cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
        done ;;
    wire_*) [ -d ../corpus/wire ] && cp -r ../corpus/wire/. "$dir" ;;
    attach_*) [ -d ../corpus/attach ] && cp -r ../corpus/attach/. "$dir" ;;
    zon_*) [ -d ../corpus/config ] && cp -r ../corpus/config/. "$dir" ;;
    # The 16 MiB cases are padded at check time; their committed seeds are small.
    workspace_*) find ../corpus/workspace -maxdepth 1 -name '*.json' -size -64k -exec cp {} "$dir" \; ;;
    agent_record) cp ../corpus/workspace/records/*.json "$dir" ;;
    integration_*) cp ../corpus/integrations/*.toml "$dir" ;;
    broker_key) cp ../corpus/broker/keys/*.key "$dir" ;;
    broker_resume_plan) cp ../corpus/broker/resume/*.txt "$dir" ;;
    broker_frames) cp ../corpus/broker/frames/*.json "$dir" ;;
    # Sidecar seeds share file names, so name them after their case directory.
    broker_alias_sidecar | broker_owner_file)
      local pattern='aliases.json'
      [ "$target" = broker_owner_file ] && pattern='*.owner'
      find ../corpus/broker/sidecar -name "$pattern" -print0 |
        while IFS= read -r -d '' f; do
          cp "$f" "$dir/$(basename "$(dirname "$f")")"
        done ;;
    persist_provenance) cp ../corpus/persist/provenance/* "$dir" ;;
    persist_checkpoint) cp ../corpus/persist/checkpoints/*.json "$dir" ;;
    persist_blob)
      find ../corpus/persist/blobs -name '*.tar' -size -64k -exec cp {} "$dir" \; ;;
  esac
  return 0
}

for target in $(cargo "${toolchain[@]}" fuzz list); do
  seed_corpus "$target"
  dict=()
  case $target in
    format_*) dict=(-dict=../corpus/fuzz/checkpoint.dict) ;;
    workspace_*|agent_*|integration_*) dict=(-dict=../corpus/fuzz/agent-session.dict) ;;
    broker_*) dict=(-dict=../corpus/broker/broker.dict) ;;
  esac
  echo "== fuzz $target (${secs}s)"
  set +e
  cargo "${toolchain[@]}" fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 "${dict[@]}" \
    > "fuzz-$target.log" 2>&1
  status=$?
  set -e
  grep -E '^(stat::|INFO: Running|.*(ERROR|panicked|SUMMARY|Done))' "fuzz-$target.log" || true
  if [ "$status" -ne 0 ]; then
    # The whole log: the panic message and the artifact to reproduce it with.
    cat "fuzz-$target.log"
    echo "fuzz target $target failed (exit $status)"
    exit 1
  fi
done
