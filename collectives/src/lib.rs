//! Compression-accelerated MPI collectives in the C-Coll design, beside their baselines.
