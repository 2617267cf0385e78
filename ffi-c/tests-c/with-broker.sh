#!/usr/bin/env bash
# Starts a fresh cursus-broker (port 0, temporary data directory), exports
# CURSUS_TEST_BROKER=127.0.0.1:PORT, runs the given command, then stops the
# broker and removes its data whatever happens.
#
# With CURSUS_TEST_PKI_BIN set (the path of cursus-test-pki), it also writes
# a test PKI (CA, server and client certificates, and ones of a CA nobody
# trusts) and starts a second, secure broker: TLS on a free port, mutual TLS
# (client certificates signed by the test CA) and token authentication with
# the users below. It exports
#   CURSUS_TEST_SECURE_BROKER=127.0.0.1:PORT   the secure broker's TLS listener
#   CURSUS_TEST_PKI=DIR                        ca.pem, client.pem, client.key,
#                                              other-ca.pem, ... (see cursus-test-pki)
# The secure broker's users (principal / token / permissions):
#   ffi-admin  / ffi-admin-token  / *
#   ffi-reader / ffi-reader-token / topic.read
#   usage: [CURSUS_TEST_PKI_BIN=...] with-broker.sh BROKER_BIN COMMAND [ARGS...]
set -euo pipefail
bin=$1; shift
data=$(mktemp -d "${TMPDIR:-/tmp}/cursus-ffi-test.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$data"
}
trap cleanup EXIT INT TERM

# start_broker NAME ARGS...: starts a broker whose files live in $data/NAME,
# reads its banner into $banner, and keeps draining its stdout.
banner=""
start_broker() {
  local name=$1; shift
  mkdir -p "$data/$name"
  local fifo="$data/$name/stdout"
  mkfifo "$fifo"
  "$bin" --health-listen 127.0.0.1:0 --data-dir "$data/$name/data" "$@" >"$fifo" 2>"$data/$name/stderr" &
  pids+=($!)
  local fd
  exec {fd}<"$fifo"
  banner=""
  if ! IFS= read -r -t 60 banner <&"$fd"; then
    echo "with-broker: the $name broker did not start:" >&2
    cat "$data/$name/stderr" >&2 || true
    exit 1
  fi
  # Keep draining the broker's stdout so it never blocks on a full pipe.
  cat <&"$fd" >/dev/null &
  pids+=($!)
}

# field NAME: the value of NAME= in $banner (" addr=" is not "tls_addr=").
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$banner"; }

start_broker plain --listen 127.0.0.1:0
addr=$(field addr)
if [[ -z "$addr" ]]; then
  echo "with-broker: unexpected first line: $banner" >&2
  exit 1
fi
export CURSUS_TEST_BROKER=$addr

if [[ -n "${CURSUS_TEST_PKI_BIN:-}" ]]; then
  pki="$data/pki"
  "$CURSUS_TEST_PKI_BIN" "$pki" >/dev/null
  # TLS only: every connection the tests make to it is a TLS one.
  cat >"$data/secure.toml" <<TOML
listen = "off"
tls_listen = "127.0.0.1:0"
tls_cert_file = "$pki/server.pem"
tls_key_file = "$pki/server.key"
tls_client_ca_file = "$pki/ca.pem"
enable_sasl = true

[[users]]
principal = "ffi-admin"
token = "ffi-admin-token"
permissions = ["*"]

[[users]]
principal = "ffi-reader"
token = "ffi-reader-token"
permissions = ["topic.read"]
TOML
  start_broker secure --config "$data/secure.toml"
  tls_addr=$(field tls_addr)
  if [[ -z "$tls_addr" ]]; then
    echo "with-broker: the secure broker reports no tls_addr: $banner" >&2
    exit 1
  fi
  export CURSUS_TEST_SECURE_BROKER=$tls_addr CURSUS_TEST_PKI=$pki
fi
"$@"
