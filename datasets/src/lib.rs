//! Seeded field generators, SDRBench-style raw-file loaders and quality metrics.
