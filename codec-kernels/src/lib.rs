//! Kernel bodies shared by every backend.
//!
//! Everything here is a pure function of a grid position and its inputs, written with
//! `core` only: no allocation, no `std`, no host calls. The host's CPU executor calls
//! these bodies for every grid position; the PTX build wraps the very same bodies in
//! `extern "gpu-kernel"` entry points. Each kernel is defined once in [`kernels`] (with
//! the [`launch`] machinery): its entry point, name and parameter struct; the names are
//! [`kernels::ENTRY_POINTS`]. See `DESIGN.md` ("The one rule").
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, stdarch_nvptx))]

pub mod bitstream;
pub mod gpu_phases;
pub mod grid;
pub mod half_convert;
#[macro_use]
pub mod launch;
pub mod kernels;
pub mod reduce;
pub mod scan;
pub mod shared;
pub mod szx;
pub mod zfp;

#[cfg(target_arch = "nvptx64")]
mod entry;
