//! The plain SZx decoder: any bytes give a value or a decode error, and the allocating
//! `decompress` agrees with `decompress_into` bit for bit.
#![no_main]

use codec_host::szx;
use codec_host::{BackendElem, ElemType};
use codec_host_fuzz::{backends, bits, output, typed};
use libfuzzer_sys::fuzz_target;

fn decode<T: BackendElem>(data: &[u8], n: usize) {
    let mut out = output::<T>(n);
    let into = typed("decompress_into", codec_host::decompress_into(data, &mut out, backends()[1]));
    if n <= codec_host_fuzz::MAX_VALUES {
        let whole = typed("decompress", szx::decompress::<T>(data));
        assert_eq!(into.is_some(), whole.is_some(), "decompress and decompress_into disagree");
        if let Some((values, _)) = whole {
            assert_eq!(bits(&values), bits(&out));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(header) = typed("read", szx::SzxHeader::read(data)) else { return };
    match header.elem {
        ElemType::F32 => decode::<f32>(data, header.len()),
        ElemType::F64 => decode::<f64>(data, header.len()),
    }
});
