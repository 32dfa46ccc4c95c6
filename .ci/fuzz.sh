#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer) for a bounded time, from a
# corpus of real streams (`cargo xtask fuzz-corpus`). Fails on any crash, panic, leak,
# timeout or allocation above the limit; the failing input is kept under
# fuzz/artifacts/<target>/ (make it a regression test in codec-host/tests).
#   CCOLL_FUZZ_SECONDS  seconds per target (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${CCOLL_FUZZ_SECONDS:-20}"
command -v cargo-fuzz >/dev/null || { echo "fuzz: cargo-fuzz missing (.ci/install-deps.sh installs it)"; exit 1; }

cargo xtask fuzz-corpus
cd fuzz
targets=$(cargo +nightly fuzz list)
for t in $targets; do
  echo "== fuzz $t (${secs}s)"
  # A single allocation above 256 MiB is a finding: decoders must check what a header
  # declares against the stream before allocating (docs/guarantees.md).
  set +e
  cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=1024 -malloc_limit_mb=256 -timeout=10 -print_final_stats=1 2>&1 \
    | grep -E '^(Done|stat::number_of_executed_units)|panicked|ERROR|SUMMARY|Test unit written'
  status=${PIPESTATUS[0]} # cargo fuzz's, not grep's
  set -e
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $t failed; input in fuzz/artifacts/$t/"
    exit 1
  fi
done
echo "fuzz: every target ran ${secs}s without a finding"
