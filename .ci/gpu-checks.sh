#!/usr/bin/env bash
# GPU-path checks, called from .ci/run after install-deps.sh. No GPU is needed:
#  1. `cargo xtask build-ptx`: codec-kernels as PTX for sm_70/80/90, every module
#     checked by ptxas (fails on any ptxas error) with the resource table printed;
#     prints "SKIPPED ptx: <reason>" instead when the nightly or its rust-src is missing.
#  2. codec-host with the `cuda` feature (cust, linked against libcuda from Debian's
#     libcuda1) is built and its unit tests run; without a device they check that the
#     backend reports "no device" and falls back to the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/cuda-env.sh

ptx_built=0
if ! rustup run nightly rustc -V >/dev/null 2>&1; then
  echo "SKIPPED ptx: no nightly toolchain (rustup toolchain install nightly --component rust-src)"
elif [ ! -d "$(rustup run nightly rustc --print sysroot)/lib/rustlib/src/rust/library/core" ]; then
  echo "SKIPPED ptx: the nightly has no rust-src (rustup component add rust-src --toolchain nightly failed)"
else
  echo "== cargo xtask build-ptx"
  cargo xtask build-ptx
  ptx_built=1
fi

echo "== cargo build -p codec-host --features cuda"
cargo build -p codec-host --features cuda
echo "== cargo test -p codec-host --features cuda --lib"
if [ "$ptx_built" = 1 ]; then
  # The embedded-PTX test must then find the modules rather than report their absence.
  CCOLL_REQUIRE_PTX=1 cargo test -p codec-host --features cuda --lib
else
  cargo test -p codec-host --features cuda --lib
fi
