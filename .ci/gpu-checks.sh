#!/usr/bin/env bash
# GPU-path checks, called from .ci/run after install-deps.sh. No GPU is needed:
#  1. `cargo xtask build-ptx`: codec-kernels as PTX for sm_70/80/90, every module
#     checked by ptxas (fails on any ptxas error) with the resource table printed;
#     prints "SKIPPED ptx: <reason>" instead when the nightly or its rust-src is missing.
#  2. codec-host with the `cuda` feature (cust, linked against libcuda from Debian's
#     libcuda1) is built and its unit tests run; without a device they check that the
#     backend reports "no device" and falls back to the CPU.
#  3. The same tests on the emulated CUDA device (`cargo xtask emulate`, docs/gpu.md "The
#     emulated device"): the real PTX through the real launch code, compared with the CPU
#     byte for byte, once per PTX architecture (CCOLL_EMU_CC picks the module), with
#     every launch logged (CCOLL_EMU_STATS) to count the entry points exercised; then
#     every codec, element type and dimensionality, the reductions and the half
#     conversions through codec-host's gpu_workload example (also checked against the CPU).
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

if [ "$ptx_built" = 1 ]; then
  stats="$PWD/target/emulated-cuda/launches.jsonl"
  # The largest launch here runs ~4e7 instructions: a kernel that never ends fails
  # (CUDA_ERROR_LAUNCH_TIMEOUT) instead of hanging CI.
  export CCOLL_EMU_MAX_INSTRUCTIONS=5e9
  mkdir -p "$(dirname "$stats")"
  : > "$stats"
  for cc in ${CCOLL_EMU_CCS:-70 80 90}; do
    echo "== cargo test -p codec-host --features cuda --lib on the emulated device (sm_$cc)"
    before=$(wc -l < "$stats")
    CCOLL_EMU_CC=$cc CCOLL_EMU_STATS="$stats" CCOLL_REQUIRE_PTX=1 \
      cargo xtask emulate --no-build -- cargo test -p codec-host --features cuda --lib
    # A test that found "no device" would pass without running anything: refuse that.
    if [ "$(wc -l < "$stats")" = "$before" ]; then
      echo "no kernel ran on the emulated sm_$cc device" >&2
      exit 1
    fi
  done
  # Every codec (f32/f64, 1D/2D/3D, a ragged 23^3 field), the reductions and the half
  # conversions through the gpu_workload example, each checked against the CPU.
  echo "== gpu_workload matrix on the emulated device"
  (
    eval "$(cargo xtask emulate --print-env)"
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
  launched=$(grep -o '"kernel":"[^"]*"' "$stats" | sort -u | sed 's/.*:"//; s/"$//')
  entries=$(grep -o '^\.visible \.entry [A-Za-z0-9_]*' target/ptx/codec_kernels.sm_80.ptx | awk '{print $3}' | sort -u)
  echo "emulated device: $(wc -l < "$stats") launches, $(echo "$launched" | grep -c .) of $(echo "$entries" | grep -c .) entry points"
  missing=$(comm -13 <(echo "$launched") <(echo "$entries") | tr '\n' ' ')
  [ -z "$missing" ] || echo "entry points not launched: $missing"
fi
