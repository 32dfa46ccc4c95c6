//! Array shapes, x fastest (zfp's and SDRBench's convention).

use core::fmt;

/// The extent of a 1- to 3-dimensional array; `dims()[0]` varies fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: [usize; 3],
    ndims: u8,
}

impl Shape {
    /// A 1D array of `nx` values.
    pub const fn d1(nx: usize) -> Self {
        Shape { dims: [nx, 1, 1], ndims: 1 }
    }
    /// A 2D array, `nx` fastest.
    pub const fn d2(nx: usize, ny: usize) -> Self {
        Shape { dims: [nx, ny, 1], ndims: 2 }
    }
    /// A 3D array, `nx` fastest.
    pub const fn d3(nx: usize, ny: usize, nz: usize) -> Self {
        Shape { dims: [nx, ny, nz], ndims: 3 }
    }
    /// From a list of one to three extents, fastest first.
    pub fn from_dims(dims: &[usize]) -> crate::Result<Self> {
        match *dims {
            [nx] => Ok(Shape::d1(nx)),
            [nx, ny] => Ok(Shape::d2(nx, ny)),
            [nx, ny, nz] => Ok(Shape::d3(nx, ny, nz)),
            _ => Err(crate::Error::BadDims(format!("{} dimensions given, 1 to 3 supported", dims.len()))),
        }
    }
    /// The extents, fastest first.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.ndims as usize]
    }
    /// Number of dimensions (1 to 3).
    pub fn ndims(&self) -> usize {
        self.ndims as usize
    }
    /// Number of values, or `None` if the product overflows.
    pub fn checked_len(&self) -> Option<usize> {
        self.dims().iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
    }
    /// Number of values (saturating).
    pub fn len(&self) -> usize {
        self.checked_len().unwrap_or(usize::MAX)
    }
    /// True if some extent is zero.
    pub fn is_empty(&self) -> bool {
        self.dims().contains(&0)
    }
}

/// Formats as `NXxNYxNZ`, the form the CLI takes.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.dims().iter().enumerate() {
            if i > 0 {
                f.write_str("x")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl core::str::FromStr for Shape {
    type Err = crate::Error;
    /// Parses `NX[xNY[xNZ]]`.
    fn from_str(s: &str) -> crate::Result<Self> {
        let dims = s
            .split(['x', 'X'])
            .map(|p| p.trim().parse::<usize>().map_err(|_| crate::Error::BadDims(format!("cannot parse {s:?} as NX[xNY[xNZ]]"))))
            .collect::<crate::Result<Vec<_>>>()?;
        Shape::from_dims(&dims)
    }
}
