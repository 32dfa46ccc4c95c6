//! The algorithms, each over a [`crate::call::Call`]: they move frames and decode them,
//! and never stop early, so every rank runs the same schedule to its end.

pub(crate) mod alltoall;
pub(crate) mod baseline;
pub(crate) mod cdr;
pub(crate) mod direct;
pub(crate) mod doubling;
pub(crate) mod hier_host;
pub(crate) mod p2p;
pub(crate) mod ring;
pub(crate) mod tree;
