#!/usr/bin/env bash
# Prints the fenced code block after the `<!-- first-program` marker of a
# README: the first program a user copies, which the install checks build
# and run (tools/test-install.sh, ffi-c/tests-c/install/run.sh,
# tools/dist/check-aarch64.sh).
#   usage: readme-block.sh README.md
set -euo pipefail
awk '/<!-- first-program/ {found=1; next}
     found && /^```/ {if (inside) exit; inside=1; next}
     inside {print}' "$1"
