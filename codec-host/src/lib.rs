//! Lossy floating-point codecs for compression-accelerated communication.
//!
//! ```
//! use codec_host::{Codec, Shape};
//! let field: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.01).sin()).collect();
//! let codec = Codec::zfp_accuracy(1e-3);
//! let stream = codec.compress(&field, Shape::d2(64, 64)).unwrap();
//! let mut back = vec![0f32; field.len()];
//! let info = codec_host::decompress_into(&stream, &mut back).unwrap();
//! assert_eq!(info.shape, Shape::d2(64, 64));
//! assert!(field.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 1e-3));
//! ```
//!
//! Every codec runs its kernel bodies from `codec-kernels` through a [`CpuExecutor`]
//! (parallel over blocks with rayon); [`Codec::compress`] uses a shared executor with
//! one thread per core, [`Codec::compress_with`] takes the caller's. [`Backend::auto`]
//! picks a CUDA device instead when the crate is built with the `cuda` feature and a
//! device answers (see `docs/gpu.md`).

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
pub use codec::{decompress_into, decompress_into_with, inspect, Codec, StreamInfo, SzxLayout, ZfpMode, CODEC_FORMS};
pub use szx::ErrorBound;
pub use element::{ElemType, Element};
pub use error::{Error, Result};
pub use executor::CpuExecutor;
pub use shape::Shape;
