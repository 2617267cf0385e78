#!/usr/bin/env bash
# Assembles ROOT: Debian's arm64 CPython 3.11 and OpenJDK 17 JRE (and the
# libraries they load), unpacked, to run the aarch64 wheel and jar under
# `qemu-aarch64 -L ROOT` (tools/dist/check-aarch64.sh). Nothing is installed
# on the machine: apt works on a private state folder (ROOT.apt) that knows
# only arm64, downloads the packages by name and dpkg -x unpacks them. Kept
# between runs; rebuilt when the package list below changes.
#   usage: arm64-root.sh ROOT
set -euo pipefail
root=$(realpath -m "$1")
packages=(libc6 libgcc-s1 libstdc++6 zlib1g libexpat1 libffi8 libssl3
          python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
          openjdk-17-jre-headless)
stamp=$root/.cursus-arm64-root
if [[ -f "$stamp" && "$(cat "$stamp")" == "${packages[*]}" ]]; then
  echo "arm64 root: $root (kept)"
  exit 0
fi
apt=$root.apt
rm -rf "$root" "$apt"
mkdir -p "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
touch "$apt/state/status"
opts=(-o APT::Architecture=arm64 -o "APT::Architectures::=arm64"
      -o "Dir::State=$apt/state" -o "Dir::State::status=$apt/state/status"
      -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
apt-get "${opts[@]}" -q update
(cd "$apt/debs" && apt-get "${opts[@]}" -q download "${packages[@]}")
mkdir -p "$root"
for deb in "$apt/debs"/*.deb; do dpkg -x "$deb" "$root"; done
rm -rf "$apt"
printf '%s\n' "${packages[*]}" >"$stamp"
echo "arm64 root: $root"
