//! ZFP streams (zfp 1.0 compatible). TO BE WRITTEN (issue 2).
use crate::{Codec, CpuExecutor, Element, Result, Shape, StreamInfo};

pub(crate) fn compress<T: Element>(_codec: &Codec, _data: &[T], _shape: Shape, _exec: &CpuExecutor) -> Result<Vec<u8>> {
    unimplemented!("zfp::compress")
}
pub(crate) fn inspect(_stream: &[u8]) -> Result<StreamInfo> {
    unimplemented!("zfp::inspect")
}
pub(crate) fn decompress_into<T: Element>(_stream: &[u8], _out: &mut [T], _exec: &CpuExecutor) -> Result<StreamInfo> {
    unimplemented!("zfp::decompress_into")
}
