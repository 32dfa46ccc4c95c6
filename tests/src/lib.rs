//! Workspace-level integration tests. The mpirun-driven collective tests live beside the
//! binaries they launch, in `collectives/tests/`, because Cargo exposes a binary's path
//! (`CARGO_BIN_EXE_*`) only to its own package's tests.
