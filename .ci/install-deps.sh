#!/usr/bin/env bash
# Installs everything the build, tests and benchmarks need on a fresh Debian bookworm
# machine. Idempotent: each step is skipped when its result is already present.
set -euo pipefail

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libzfp-dev zfp python3-zfpy python3-numpy libopenmpi-dev openmpi-bin gfortran python3-mpi4py hpcc libclang-dev \
         clang iproute2 pkg-config fonts-dejavu-core; do
  have_pkg "$p" || need_apt+=("$p")
done
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# GPU toolchain pieces, taken out of Debian's non-free packages without installing them:
# ptxas (nvidia-cuda-toolkit, CUDA 11.8: checks PTX for sm_70..sm_90) and libcuda.so
# (libcuda1: cust links it; with no GPU, cuInit reports "no device"). They land in
# $CCOLL_CUDA_DIR (default /opt/ccoll-cuda): bin/ptxas and lib64/libcuda.so*.
# `.ci/cuda-env.sh` puts them on the paths cargo and the tests use.
CUDA_DIR="${CCOLL_CUDA_DIR:-/opt/ccoll-cuda}"
if [ ! -x "$CUDA_DIR/bin/ptxas" ] || [ ! -e "$CUDA_DIR/lib64/libcuda.so" ]; then
  nonfree=/etc/apt/sources.list.d/ccoll-nonfree.sources
  if ! apt-cache policy libcuda1 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    if [ ! -f "$nonfree" ]; then
      echo "install-deps: adding Debian contrib/non-free components ($nonfree)"
      $SUDO tee "$nonfree" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
    $SUDO apt-get update -qq
  fi
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "install-deps: extracting ptxas and libcuda into $CUDA_DIR"
  (cd "$work" && apt-get download -qq nvidia-cuda-toolkit libcuda1 2>/dev/null)
  $SUDO mkdir -p "$CUDA_DIR/bin" "$CUDA_DIR/lib64"
  dpkg-deb --fsys-tarfile "$work"/nvidia-cuda-toolkit_*.deb | tar -x -C "$work" ./usr/bin/ptxas
  $SUDO install -m 0755 "$work/usr/bin/ptxas" "$CUDA_DIR/bin/ptxas"
  dpkg-deb --fsys-tarfile "$work"/libcuda1_*.deb | tar -x -C "$work" --wildcards './usr/lib/*/libcuda.so*'
  lib="$(find "$work/usr/lib" -name 'libcuda.so.[0-9]*.*' -type f | head -n1)"
  $SUDO install -m 0644 "$lib" "$CUDA_DIR/lib64/"
  # The package has libcuda.so -> libcuda.so.1 -> libcuda.so.<version>; rebuild the
  # chain inside the tool dir so the linker (-lcuda) and the loader (soname) both find it.
  $SUDO ln -sf "$(basename "$lib")" "$CUDA_DIR/lib64/libcuda.so.1"
  $SUDO ln -sf libcuda.so.1 "$CUDA_DIR/lib64/libcuda.so"
  "$CUDA_DIR/bin/ptxas" --version | tail -n1
fi

# The PTX build needs the nightly's core sources (-Zbuild-std=core). Not fatal here:
# .ci/gpu-checks.sh reports "SKIPPED ptx:" when they cannot be had.
if command -v rustup >/dev/null && rustup toolchain list | grep -q '^nightly'; then
  rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src' \
    || rustup component add rust-src --toolchain nightly \
    || echo "install-deps: could not add rust-src to the nightly toolchain (PTX build will be skipped)"
fi

# cargo-fuzz drives the fuzz targets of fuzz/ on the nightly toolchain (.ci/fuzz.sh).
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
