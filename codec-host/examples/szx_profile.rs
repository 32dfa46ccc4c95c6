use codec_host::szx::{self, ErrorBound, SzxOptions};
use codec_host::{CpuExecutor, Shape};
#[repr(C)]
struct Ts { s: i64, ns: i64 }
extern "C" { fn clock_gettime(c: i32, t: *mut Ts) -> i32; }
fn cpu() -> f64 { let mut t = Ts { s: 0, ns: 0 }; unsafe { clock_gettime(3, &mut t) }; t.s as f64 + t.ns as f64 * 1e-9 }
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let e: f64 = a[1].parse().unwrap();
    let reps: usize = a[2].parse().unwrap();
    let x = match a.get(3).map(|s| s.as_str()) { Some("grad") => datasets::grad16m(), Some("small") => datasets::smooth3d_field(64, 1e-3, 1), _ => datasets::smooth3d() };
    let exec = CpuExecutor::new(1).unwrap();
    let opts = SzxOptions::default();
    let mut buf = vec![0u8; szx::max_compressed_len::<f32>(x.len(), &opts)];
    let len = szx::compress_into(&x, Shape::d1(x.len()), ErrorBound::Abs(e), &opts, &mut buf, &exec).unwrap();
    let mut back = vec![0f32; x.len()];
    let (mut bc, mut bd) = (f64::MAX, f64::MAX);
    for _ in 0..reps {
        let t = cpu();
        szx::compress_into(&x, Shape::d1(x.len()), ErrorBound::Abs(e), &opts, &mut buf, &exec).unwrap();
        bc = bc.min(cpu() - t);
        if std::env::var("ONLY").as_deref() == Ok("c") { continue; }
        let t = cpu();
        szx::decompress_into(&buf[..len], &mut back, &exec).unwrap();
        bd = bd.min(cpu() - t);
    }
    let mb = x.len() as f64 * 4.0 / 1e6;
    println!("e={e} ratio {:.3} comp {:.0} MB/s decomp {:.0} MB/s", x.len() as f64 * 4.0 / len as f64, mb / bc, mb / bd);
}
