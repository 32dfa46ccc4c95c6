//! SZx: error-bounded coding of floating-point blocks (Yu et al., HPDC'22), with a bound
//! that holds for every finite value.
//!
//! The data is cut into blocks. Each block becomes a zero block, a constant block, a
//! coded block (rounded mantissas or fixed-point multiples, with leading-byte reuse) or a raw block; see
//! [`plan`] for the decision and [`coding`] for the coded form. The work is split so
//! that a GPU runs it as three launches and the CPU executor as three passes over tiles:
//!
//! 1. [`plan::plan_block`], one body per block: the block's state and payload size;
//! 2. an exclusive scan of the sizes (done by the host), giving each block its offset;
//! 3. [`encode::encode_block`], one body per block: its payload, at its offset.
//!
//! A processor that runs the blocks in order (one CPU thread) does phases 1 and 3 at
//! once, [`plan::plan_encode_block`]: the same decision, with each coding it weighs
//! written in place instead of only measured; the host moves the payloads once the
//! offsets are known.
//!
//! Decoding is one body per block, [`decode::decode_block`], reading at its offset.
//! All arithmetic is done in the element's own type ([`scalar::SzxFloat`]).

pub mod coding;
pub mod decode;
pub mod encode;
pub mod group_ops;
pub mod plan;
pub mod reduce;
pub mod scalar;
pub mod stats;
pub mod tolerance;

pub use coding::{BlockKind, MAX_BLOCK_SIZE};
pub use decode::{check_block, decode_block, payload_len, BlockError};
pub use encode::{encode_block, max_payload_len};
pub use plan::{plan_block, plan_encode_block, BlockPlan};
pub use scalar::SzxFloat;
pub use tolerance::Tolerance;
