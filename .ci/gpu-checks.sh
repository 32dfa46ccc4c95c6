#!/usr/bin/env bash
# GPU-path checks, called from .ci/run after install-deps.sh. No GPU is needed:
#  1. `cargo xtask build-ptx`: codec-kernels as PTX for sm_70/80/90, every module
#     checked by ptxas (fails on any ptxas error) with the resource table printed;
#     prints "SKIPPED ptx: <reason>" instead when the nightly or its rust-src is missing.
#  2. codec-host with the `cuda` feature (cust, linked against libcuda from Debian's
#     libcuda1) is built and its unit tests run; without a device they check that the
#     backend reports "no device" and falls back to the CPU.
#  3. The device tests on the emulated CUDA device (`cargo xtask emulate`, docs/gpu.md
#     "The emulated device"): the real PTX through the real launch code, compared with
#     the CPU byte for byte, once per PTX architecture (CCOLL_EMU_CC picks the module),
#     once more with delayed streams, with every launch logged (CCOLL_EMU_STATS) so that
#     an entry point never launched fails the run; then
#     every codec, element type and dimensionality, the reductions and the half
#     conversions through codec-host's gpu_workload example (also checked against the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/cuda-env.sh

# CI has the nightly and its rust-src (install-deps.sh adds them): there a missing
# toolchain is a failure, never a silent skip. Elsewhere it is reported as a skip.
require_ptx="${CCOLL_REQUIRE_PTX:-${CI:+1}}"
ptx_built=0
skip_ptx() {
  if [ "$require_ptx" = 1 ]; then
    echo "FAILED ptx: $1 (CCOLL_REQUIRE_PTX=1 or CI is set)" >&2
    exit 1
  fi
  echo "SKIPPED ptx: $1"
}
if ! rustup run nightly rustc -V >/dev/null 2>&1; then
  skip_ptx "no nightly toolchain (rustup toolchain install nightly --component rust-src)"
elif [ ! -d "$(rustup run nightly rustc --print sysroot)/lib/rustlib/src/rust/library/core" ]; then
  skip_ptx "the nightly has no rust-src (rustup component add rust-src --toolchain nightly failed)"
else
  echo "== cargo xtask build-ptx"
  cargo xtask build-ptx
  ptx_built=1
fi

echo "== cargo build -p codec-host --features cuda"
cargo build -p codec-host --features cuda
echo "== cargo test -p codec-host --features cuda --lib (Debian's driver library: no device)"
if [ "$ptx_built" = 1 ]; then
  # The embedded-PTX test must then find the modules rather than report their absence.
  CCOLL_REQUIRE_PTX=1 cargo test -p codec-host --features cuda --lib
else
  cargo test -p codec-host --features cuda --lib
fi

if [ "$ptx_built" = 1 ]; then
  stats="$PWD/target/emulated-cuda/launches.jsonl"
  # The largest launch here runs ~4e7 instructions: a kernel that never ends fails
  # (CUDA_ERROR_LAUNCH_TIMEOUT) instead of hanging CI.
  export CCOLL_EMU_MAX_INSTRUCTIONS=5e9
  mkdir -p "$(dirname "$stats")"
  : > "$stats"
  # The emulator's library (release) and the cuda-enabled ccoll, linked against it.
  cargo xtask emulate -- true
  for cc in ${CCOLL_EMU_CCS:-70 80 90}; do
    echo "== codec-host cuda tests on the emulated device (sm_$cc)"
    # CCOLL_REQUIRE_GPU: a test that finds no device fails instead of skipping.
    CCOLL_EMU_CC=$cc CCOLL_EMU_STATS="$stats" CCOLL_REQUIRE_PTX=1 CCOLL_REQUIRE_GPU=1 \
      cargo xtask emulate --no-build -- \
      cargo test -p codec-host --features cuda --lib --test gpu_device --test cli_backend
  done
  # The same device tests with every queued operation delayed: a missing stream
  # synchronisation in the host code then shows up as a wrong result.
  echo "== gpu_device with CCOLL_EMU_STREAM_DELAY_US=200 (sm_80)"
  CCOLL_EMU_STREAM_DELAY_US=200 CCOLL_REQUIRE_PTX=1 CCOLL_REQUIRE_GPU=1 \
    cargo xtask emulate --no-build -- cargo test -p codec-host --features cuda --test gpu_device
  # Every codec (f32/f64, 1D/2D/3D, a ragged 23^3 field), the reductions and the half
  # conversions through the gpu_workload example, each checked against the CPU.
  echo "== gpu_workload matrix on the emulated device"
  (
    eval "$(cargo xtask emulate --no-build --print-env)"
    export CCOLL_EMU_STATS="$stats"
    cargo build -q -p codec-host --features cuda --example gpu_workload
    run() { target/debug/examples/gpu_workload "$@" --edge 23; }
    for t in f32 f64; do
      run reduce --type $t
      for codec in zfp-rate=8 zfp-tol=1e-3 szx=1e-3 szx-pipelined=1e-3,1024; do
        for d in 1 2 3; do
          run compress "$codec" --type $t --dims $d
          run decompress "$codec" --type $t --dims $d
        done
      done
    done
    run half
  )
  # The collectives on device buffers: mpirun on 2-5 ranks, each case on host and
  # device buffers, equal bit for bit (collectives/tests/device_mpirun.rs); with every
  # queued operation delayed, so that a missing synchronisation changes a result.
  echo "== collectives device_mpirun on the emulated device"
  CCOLL_EMU_STREAM_DELAY_US=200 CCOLL_REQUIRE_PTX=1 CCOLL_REQUIRE_GPU=1 \
    cargo xtask emulate --no-build -- cargo test -p collectives --features cuda --test device_mpirun
  launched=$(grep -o '"kernel":"[^"]*"' "$stats" | sort -u | sed 's/.*:"//; s/"$//')
  entries=$(grep -o '^\.visible \.entry [A-Za-z0-9_]*' target/ptx/codec_kernels.sm_80.ptx | awk '{print $3}' | sort -u)
  echo "emulated device: $(wc -l < "$stats") launches, $(echo "$launched" | grep -c .) of $(echo "$entries" | grep -c .) entry points"
  missing=$(comm -13 <(echo "$launched") <(echo "$entries") | tr '\n' ' ')
  if [ -n "${missing// /}" ]; then
    echo "entry points never launched on the emulated device: $missing" >&2
    exit 1
  fi
fi
