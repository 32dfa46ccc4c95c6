//! Kernel bodies in GPU form over the codecs' block coders: the pieces a GPU launch
//! needs that the CPU paths do not (shared outputs instead of per-tile slices, per-block
//! slots and offsets instead of sequential runs). See `docs/gpu.md`.

pub mod szx;
pub mod zfp;
