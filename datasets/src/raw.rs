//! Raw little-endian arrays, the SDRBench layout: a file holds exactly the product of
//! its dimensions in values, fastest dimension first in memory, no header.

use codec_host::Element;

use crate::{Error, Result};
use std::path::Path;

/// Number of values in an array of `dims`, rejecting zero extents and overflow.
pub fn dims_len(dims: &[usize]) -> Result<usize> {
    let bad = |why| Error::BadDims { dims: dims.to_vec(), why };
    if dims.is_empty() {
        return Err(bad("no dimensions"));
    }
    if dims.contains(&0) {
        return Err(bad("a dimension is zero"));
    }
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).ok_or_else(|| bad("too many values"))
}

/// Reads a raw little-endian array of `dims` (any order; only the product matters) from
/// `path`. The file must be exactly that size.
pub fn read_raw<T: Element>(path: &Path, dims: &[usize]) -> Result<Vec<T>> {
    let len = dims_len(dims)?;
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let expected = (len as u64).checked_mul(T::SIZE as u64).ok_or(Error::BadDims { dims: dims.to_vec(), why: "too many bytes" })?;
    let actual = std::fs::metadata(path).map_err(io)?.len();
    if actual != expected {
        return Err(Error::SizeMismatch { path: path.to_path_buf(), dims: dims.to_vec(), elem: T::TYPE.name(), expected, actual });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.len() as u64 != expected {
        // The file changed between the two calls.
        return Err(Error::SizeMismatch { path: path.to_path_buf(), dims: dims.to_vec(), elem: T::TYPE.name(), expected, actual: bytes.len() as u64 });
    }
    Ok(bytes.chunks_exact(T::SIZE).map(T::get_le).collect())
}

/// Writes `values` as a raw little-endian array (the inverse of [`read_raw`]).
pub fn write_raw<T: Element>(path: &Path, values: &[T]) -> Result<()> {
    let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
    codec_host::extend_le(values, &mut bytes);
    std::fs::write(path, bytes).map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("datasets-raw-{}-{name}", std::process::id()))
    }

    #[test]
    fn raw_round_trip_and_typed_errors() {
        let p = tmp("a.f32");
        let v: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
        write_raw(&p, &v).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 96);
        assert_eq!(read_raw::<f32>(&p, &[2, 3, 4]).unwrap(), v);
        // Little-endian on disk: -3.0f32 is 0xc0400000.
        assert_eq!(&std::fs::read(&p).unwrap()[..4], &[0, 0, 0x40, 0xc0]);
        match read_raw::<f32>(&p, &[5, 5]) {
            Err(Error::SizeMismatch { expected: 100, actual: 96, elem: "f32", .. }) => {}
            other => panic!("{other:?}"),
        }
        match read_raw::<f64>(&p, &[24]) {
            Err(Error::SizeMismatch { expected: 192, actual: 96, elem: "f64", .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(read_raw::<f64>(&p, &[12]).unwrap().len(), 12);
        assert!(matches!(read_raw::<f32>(&p, &[0, 4]), Err(Error::BadDims { .. })));
        assert!(matches!(read_raw::<f32>(&p, &[usize::MAX, 2]), Err(Error::BadDims { .. })));
        assert!(matches!(read_raw::<f32>(&tmp("missing"), &[1]), Err(Error::Io { .. })));
        std::fs::remove_file(&p).unwrap();
    }
}
