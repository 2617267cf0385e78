#!/usr/bin/env bash
# Starts a fresh cursus-broker (port 0, temporary data directory), exports
# CURSUS_TEST_BROKER=127.0.0.1:PORT, runs the given command, then stops the
# broker and removes its data whatever happens.
#   usage: with-broker.sh BROKER_BIN COMMAND [ARGS...]
set -euo pipefail
bin=$1; shift
data=$(mktemp -d "${TMPDIR:-/tmp}/cursus-ffi-test.XXXXXX")
fifo="$data/stdout"
mkfifo "$fifo"
"$bin" --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --data-dir "$data/data" >"$fifo" 2>"$data/stderr" &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT INT TERM
exec 3<"$fifo"
line=""
if ! IFS= read -r -t 60 line <&3; then
  echo "with-broker: the broker did not start:" >&2
  cat "$data/stderr" >&2 || true
  exit 1
fi
# Keep draining the broker's stdout so it never blocks on a full pipe.
cat <&3 >/dev/null &
addr=$(sed -n 's/.* addr=\([^ ]*\).*/\1/p' <<<"$line")
if [[ -z "$addr" ]]; then
  echo "with-broker: unexpected first line: $line" >&2
  exit 1
fi
export CURSUS_TEST_BROKER=$addr
"$@"
