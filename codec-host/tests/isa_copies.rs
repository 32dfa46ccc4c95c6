//! Every copy of the multiversioned SZx loops (baseline, AVX2, AVX-512) writes the same
//! bytes. A CPU runs only its best copy, so this test runs itself again in a child
//! process per copy, with `CCOLL_ISA` set to it, and compares what each child coded,
//! decoded and reduced with what this process did. Copies above the CPU's are capped by
//! it: on a CPU without AVX-512 two children run the AVX2 copy.

use std::process::Command;

use codec_host::elementwise::ReduceOp;
use codec_host::szx::{self, ErrorBound, Isa, ENV_ISA};
use codec_host::{Backend, BackendElem, Codec, CpuExecutor, Element, Shape};

/// Set in the children: print the digest and the copy that ran, compare nothing.
const CHILD: &str = "CCOLL_ISA_TEST_CHILD";

/// This test's name, for the children's filter.
const NAME: &str = "every_copy_of_the_loops_writes_the_same_bytes";

/// FNV-1a over everything the codec wrote.
struct Digest(u64);

impl Digest {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&(bytes.len() as u64).to_le_bytes()) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn values<T: Element>(&mut self, v: &[T]) {
        let mut b = Vec::new();
        codec_host::extend_le(v, &mut b);
        self.add(&b);
    }
}

/// Fields of every kind of block: smooth, noisy, zero and constant runs, signed zeros,
/// subnormals, NaN and infinities, and large values (1e30).
fn fields<T: Element>(n: usize) -> Vec<Vec<T>> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let smooth = (0..n).map(|i| T::from_f64((i as f64 * 0.003).sin() * 40.0 + (i as f64 * 0.0007).cos())).collect();
    let noisy = (0..n).map(|_| T::from_f64((next() - 0.5) * 1e3)).collect();
    let special = [0.0, -0.0, 1e-40, -3.5e-39, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 2.5, 1e30];
    let mixed = (0..n)
        .map(|i| match (i / 128) % 5 {
            0 => T::from_f64(0.0),
            1 => T::from_f64(7.25),
            2 => T::from_f64(special[i % special.len()]),
            3 => T::from_f64(if i % 2 == 0 { 4e-4 } else { -4e-4 }),
            _ => T::from_f64((i as f64 * 0.37).sin() * 20.0 + next() * 1e-3),
        })
        .collect();
    vec![smooth, noisy, mixed]
}

/// Codes, decodes and reduces the fields at several bounds, on one thread (the fused
/// passes) and on three (planned and written apart), and digests every byte of it.
fn digest_type<T: Element + BackendElem>(d: &mut Digest) {
    let backends = [1, 3].map(|t| Backend::with_executor(CpuExecutor::new(t).unwrap()));
    for x in fields::<T>(128 * 150 + 37) {
        d.add(&format!("{:?}", T::finite_range(&x)).into_bytes());
        for bound in [0.0, 1e-1, 1e-3, 1e-6] {
            for backend in &backends {
                let stream = Codec::szx(ErrorBound::Abs(bound)).compress(&x, Shape::d1(x.len()), backend).unwrap();
                d.add(&stream);
                let mut back = vec![T::from_f64(-1.0); x.len()];
                codec_host::decompress_into(&stream, &mut back, backend).unwrap();
                d.values(&back);
                let (fresh, _) = szx::decompress_with::<T>(&stream, &CpuExecutor::new(1).unwrap()).unwrap();
                d.values(&fresh);
                let streams = [stream.as_slice(); 3];
                let mut acc = x.clone();
                codec_host::decompress_reduce_all(&streams, None, &mut acc, ReduceOp::Sum, backend).unwrap();
                d.values(&acc);
            }
        }
    }
}

fn digest() -> u64 {
    let mut d = Digest(0xcbf2_9ce4_8422_2325);
    digest_type::<f32>(&mut d);
    digest_type::<f64>(&mut d);
    d.0
}

#[test]
fn every_copy_of_the_loops_writes_the_same_bytes() {
    let mine = digest();
    if std::env::var_os(CHILD).is_some() {
        println!("isa={} digest={mine:016x}", szx::active_isa().name());
        return;
    }
    // The copy each child ran: the one asked for, capped by the CPU's best (what `auto`
    // runs; asked first, this process may have a ceiling of its own).
    let mut best = Isa::Avx512;
    for asked in ["auto", "baseline", "avx2", "avx512"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(ENV_ISA, asked)
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{asked}: {text}{}", String::from_utf8_lossy(&out.stderr));
        // The harness prints the test's name first, on the same line.
        let line = text.lines().find_map(|l| l.find("isa=").map(|at| &l[at..])).unwrap_or_else(|| panic!("{asked}: no digest in {text}"));
        let ran = asked.parse::<Isa>().map_or(best, |i| i.min(best));
        if asked == "auto" {
            best = line.trim_start_matches("isa=").split(' ').next().and_then(|name| name.parse().ok()).unwrap_or_else(|| panic!("auto: {line}"));
            eprintln!("this CPU runs the {} copies at best", best.name());
            continue;
        }
        assert_eq!(line, format!("isa={} digest={mine:016x}", ran.name()), "asked for {asked}");
    }
}
