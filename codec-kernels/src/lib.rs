//! Kernel bodies shared by every backend.
//!
//! Everything here is a pure function of a grid position and its inputs, written with
//! `core` only: no allocation, no `std`, no host calls. The host's CPU executor calls
//! these bodies for every grid position; the PTX build wraps the very same bodies in
//! `extern "gpu-kernel"` entry points. See `DESIGN.md` ("The one rule").
#![no_std]

pub mod bitstream;
pub mod grid;
pub mod szx;
pub mod zfp;
