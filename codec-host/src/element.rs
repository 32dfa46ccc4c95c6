//! The element types the codecs accept.

use core::fmt;

/// Runtime tag of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    F32,
    F64,
}

impl ElemType {
    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElemType::F32 => 4,
            ElemType::F64 => 8,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        })
    }
}

impl core::str::FromStr for ElemType {
    type Err = crate::Error;
    /// Parses `f32` or `f64`.
    fn from_str(s: &str) -> crate::Result<Self> {
        match s.trim() {
            "f32" => Ok(ElemType::F32),
            "f64" => Ok(ElemType::F64),
            _ => Err(crate::Error::ParamOutOfRange(format!("element type {s:?}: expected f32 or f64"))),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point element type: `f32` or `f64`. The kernels' scalar traits are
/// supertraits, so generic host code can hand its data to the kernel bodies.
pub trait Element:
    Copy
    + Default
    + PartialOrd
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + sealed::Sealed
    + codec_kernels::zfp::Scalar
    + codec_kernels::szx::SzxFloat
{
    /// The runtime tag.
    const TYPE: ElemType;
    /// Widens to f64 (exact).
    fn to_f64(self) -> f64;
    /// Narrows from f64 (rounds to nearest).
    fn from_f64(v: f64) -> Self;
}

impl Element for f32 {
    const TYPE: ElemType = ElemType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Element for f64 {
    const TYPE: ElemType = ElemType::F64;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}
