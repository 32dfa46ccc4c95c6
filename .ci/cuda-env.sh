# Source this (`. .ci/cuda-env.sh`) before building or testing with `--features cuda` or
# running `cargo xtask build-ptx` against the tool dir that install-deps.sh fills.
# cust's build script finds libcuda through CUDA_LIBRARY_PATH (<dir>/lib64); the test
# binaries load libcuda.so.1 through LD_LIBRARY_PATH; ptxas is found on PATH.
CCOLL_CUDA_DIR="${CCOLL_CUDA_DIR:-/opt/ccoll-cuda}"
export CCOLL_CUDA_DIR
if [ -d "$CCOLL_CUDA_DIR/lib64" ]; then
  export CUDA_LIBRARY_PATH="$CCOLL_CUDA_DIR${CUDA_LIBRARY_PATH:+:$CUDA_LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$CCOLL_CUDA_DIR/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -d "$CCOLL_CUDA_DIR/bin" ]; then
  export PATH="$CCOLL_CUDA_DIR/bin:$PATH"
fi
