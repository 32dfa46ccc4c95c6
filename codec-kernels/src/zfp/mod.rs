//! ZFP block coding, bit-compatible with zfp 1.0 (codec version 5) for f32 and f64 in
//! 1 to 3 dimensions, fixed-rate and fixed-accuracy modes.
//!
//! The coding steps, one module each, in the order a block goes through them:
//! [`field`] (gather with edge padding), [`fixedpoint`] (common exponent and
//! block-floating-point conversion), [`transform`] (decorrelating lifting transform),
//! [`order`] (sequency order and negabinary), [`planes`] (embedded bit-plane coder),
//! composed per block in [`block`]. The kernel bodies are in [`fixed_rate`] (one block
//! per grid thread) and [`variable`] (runs of variable-length blocks and their
//! compaction). Everything is generic over the scalar type ([`scalar`]) and the block
//! dimensionality ([`dims`]).

pub mod block;
pub mod dims;
pub mod field;
pub mod fixed_rate;
pub mod fixedpoint;
pub mod order;
pub mod planes;
pub mod scalar;
pub mod transform;
pub mod variable;

pub use block::Params;
pub use dims::{Dims, D1, D2, D3};
pub use field::Field;
pub use fixed_rate::FixedRate;
pub use scalar::Scalar;
