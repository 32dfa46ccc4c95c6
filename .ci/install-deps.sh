#!/usr/bin/env bash
# Installs everything the build, tests and benchmarks need on a fresh Debian bookworm
# machine. Idempotent: each step is skipped when its result is already present.
set -euo pipefail

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libzfp-dev zfp python3-zfpy python3-numpy libopenmpi-dev openmpi-bin libclang-dev \
         clang iproute2 pkg-config fonts-dejavu-core; do
  have_pkg "$p" || need_apt+=("$p")
done
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
