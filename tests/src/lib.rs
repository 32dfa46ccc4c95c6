//! Cross-crate and mpirun-driven integration tests live in `tests/tests/`.
