//! The zfp decoder: any bytes give a value or a decode error, one and four threads
//! (sequential and parallel variable-rate decodes) agree bit for bit.
#![no_main]

use codec_host::{BackendElem, ElemType};
use codec_host_fuzz::{backends, bits, output, typed};
use libfuzzer_sys::fuzz_target;

fn decode<T: BackendElem>(data: &[u8], n: usize) {
    let [one, four] = backends();
    let mut a = output::<T>(n);
    let mut b = output::<T>(n);
    let ra = typed("decode, 1 thread", codec_host::decompress_into(data, &mut a, one));
    let rb = typed("decode, 4 threads", codec_host::decompress_into(data, &mut b, four));
    assert_eq!(ra, rb, "1 and 4 threads disagree");
    if ra.is_some() {
        assert_eq!(bits(&a), bits(&b), "1 and 4 threads decode different values");
    }
}

fuzz_target!(|data: &[u8]| {
    if codec_host::szx::is_szx(data) {
        return; // the SZx targets' job
    }
    let Some(info) = typed("inspect", codec_host::inspect(data)) else { return };
    match info.elem {
        ElemType::F32 => decode::<f32>(data, info.shape.len()),
        ElemType::F64 => decode::<f64>(data, info.shape.len()),
    }
});
