//! Lossy floating-point codecs for compression-accelerated communication.
//!
//! The API has one shape:
//!
//! - a [`Codec`] per codec family: `Codec::Zfp { mode: ZfpMode }` (fixed rate or fixed
//!   accuracy) and `Codec::Szx { bound: ErrorBound, layout: SzxLayout }` (plain or
//!   pipelined), also parsed from and printed as the [`CODEC_FORMS`];
//! - an execution policy, the [`Backend`] (as zfp's `zfp_exec_*`): the CPU executor
//!   with its threads ([`Backend::cpu`], [`Backend::with_executor`]) or a CUDA device
//!   ([`Backend::cuda`], [`Backend::auto`] picks one when it answers);
//! - one entry point each way: [`Codec::compress`] and [`decompress_into`] for host
//!   slices, and with the `cuda` feature `Codec::compress_on` and `decompress_on` for
//!   device arrays, which take a stream of the backend as well. The stream is the same
//!   byte for byte on every backend.
//!
//! ```
//! use codec_host::{Backend, Codec, Shape};
//! let field: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.01).sin()).collect();
//! let cpu = Backend::cpu();
//! let stream = Codec::zfp_accuracy(1e-3).compress(&field, Shape::d2(64, 64), &cpu).unwrap();
//! let mut back = vec![0f32; field.len()];
//! let info = codec_host::decompress_into(&stream, &mut back, &cpu).unwrap();
//! assert_eq!(info.shape, Shape::d2(64, 64));
//! assert!(field.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 1e-3));
//! ```
//!
//! Every codec runs its kernel bodies from `codec-kernels`, through a [`CpuExecutor`]
//! (parallel over blocks with rayon) or as PTX on the device (see `docs/gpu.md`). The
//! one other way to compress is [`szx::pipelined`]'s chunk-by-chunk encoder and
//! decoder, for callers that send chunks as soon as they are written.

pub mod atomic_file;
mod backend;
mod codec;
#[cfg(feature = "cuda")]
pub mod cuda;
mod element;
pub mod elementwise;
pub mod scan;
mod error;
mod executor;
mod shape;
pub mod szx;
pub mod zfp;

pub use backend::{Backend, BackendElem, BackendKind};
pub use codec::{decompress_into, decompress_into_with, decompress_reduce, decompress_reduce_all, inspect, Codec, OutputWrites, StreamInfo, SzxLayout, ZfpMode, CODEC_FORMS};
#[cfg(feature = "cuda")]
pub use codec::decompress_on;
pub use szx::ErrorBound;
pub use element::{extend_le, read_le, ElemType, Element};
pub use error::{Error, Result};
pub use executor::CpuExecutor;
pub use shape::Shape;
