#!/usr/bin/env bash
# The trace walk-through (docs/observability.md, "See one trace from a Go
# producer to a Python consumer"): builds the Go producer, starts a fresh
# broker (free loopback port, temporary data directory: with-broker.sh),
# sends one record from Go, consumes and processes it in Python, then
# prints the trace from the two span files and checks its relations
# (show_trace.py; a broken one fails the run).
#
#   usage: run.sh BROKER_BIN PYTHON
#     PYTHON: an interpreter with cursus and opentelemetry-sdk installed.
#     cgo must find libcursus (PKG_CONFIG_PATH=.../lib/pkgconfig), as
#     `make trace-walkthrough` sets it up.
#     TRACE_WALKTHROUGH_OUT=DIR keeps go-spans.json and python-spans.jsonl
#     there (default: a temporary directory, removed).
set -euo pipefail
broker_bin=$1 python=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cursus-trace-walkthrough.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=${TRACE_WALKTHROUGH_OUT:-$tmp}
mkdir -p "$out"

# -race: the packages make test-go compiled for its race tests (the
# OpenTelemetry SDK, cursus, cursus/otel) are reused, not built again.
(cd "$here/producer" && go build -race -o "$tmp/producer" .)
topic="orders-$$"
export TOPIC=$topic PRODUCER=$tmp/producer PYTHON=$python HERE=$here OUT=$out
"$repo/ffi-c/tests-c/with-broker.sh" "$broker_bin" bash -c '
  set -e
  "$PRODUCER" "$CURSUS_TEST_BROKER" "$TOPIC" "$OUT/go-spans.json"
  "$PYTHON" "$HERE/consumer.py" "$CURSUS_TEST_BROKER" "$TOPIC" "$OUT/python-spans.jsonl"'
"$python" "$here/show_trace.py" "$topic" "$out/go-spans.json" "$out/python-spans.jsonl"
