//! Calibration: the codec's single-core compression and decompression throughput and
//! ratio, and the element-wise reduction throughput, measured in this process.

use codec_host::{Backend, Codec, CpuExecutor, Shape, SzxLayout};
use collectives::model::Params;
use std::time::Instant;

/// Calibrated machine constants.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    pub comp_bytes_per_s: f64,
    pub decomp_bytes_per_s: f64,
    pub reduce_bytes_per_s: f64,
    pub ratio: f64,
    pub measured: bool,
}

/// Values of the calibration field: 64 MiB of f32.
const VALUES: usize = 16 << 20;
const REPEATS: usize = 3;

impl Calibration {
    /// Given codec figures; the reduction is still measured.
    pub fn given(comp: f64, decomp: f64, ratio: f64) -> Calibration {
        Calibration { comp_bytes_per_s: comp, decomp_bytes_per_s: decomp, reduce_bytes_per_s: reduce_throughput(), ratio, measured: false }
    }

    /// Measures `codec` on `dataset` with one thread (best of three).
    pub fn measure(dataset: &str, codec: &str) -> Result<Calibration, String> {
        let codec = parse_codec(codec)?;
        let spec = datasets::parse_spec(dataset).map_err(|e| e.to_string())?;
        let data = spec.load_len(VALUES, datasets::DEFAULT_SEED).map_err(|e| e.to_string())?.values.to_f32();
        let one = Backend::with_executor(CpuExecutor::new(1).map_err(|e| e.to_string())?);
        let shape = Shape::from_dims(&[data.len()]).map_err(|e| e.to_string())?;
        let mut stream = Vec::new();
        let comp = best_of(|| {
            stream = codec.compress(&data, shape, &one).map_err(|e| e.to_string())?;
            Ok(())
        })?;
        let mut out = vec![0f32; data.len()];
        let decomp = best_of(|| codec_host::decompress_into(&stream, &mut out, &one).map(drop).map_err(|e| e.to_string()))?;
        let bytes = (data.len() * 4) as f64;
        Ok(Calibration {
            comp_bytes_per_s: bytes / comp,
            decomp_bytes_per_s: bytes / decomp,
            reduce_bytes_per_s: reduce_throughput(),
            ratio: bytes / stream.len() as f64,
            measured: true,
        })
    }

    /// The codec and reduction terms of the model (the rest is filled in by the caller).
    pub fn params(&self) -> Params {
        Params {
            ranks: 1,
            link_bytes_per_s: 1.0,
            alpha_s: 0.0,
            comp_bytes_per_s: self.comp_bytes_per_s,
            decomp_bytes_per_s: self.decomp_bytes_per_s,
            // Measured over 64 MiB: a fixed cost per pass is inside the throughput.
            codec_call_s: 0.0,
            reduce_bytes_per_s: self.reduce_bytes_per_s,
            ratio: self.ratio,
            host_cores: 1.0,
            ranks_per_host: 1,
            background_load: 0.0,
            // One rank per node group: no intra-group steps.
            group_ranks: 1,
            intra_bytes_per_s: f64::INFINITY,
            intra_alpha_s: 0.0,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "calibration ({}): compress {:.0} MB/s, decompress {:.0} MB/s, ratio {:.2}, reduce {:.0} MB/s (one core)",
            if self.measured { "measured" } else { "given" },
            self.comp_bytes_per_s / 1e6,
            self.decomp_bytes_per_s / 1e6,
            self.ratio,
            self.reduce_bytes_per_s / 1e6
        )
    }
}

/// An SZx codec as ccoll-bench writes it (`szx-rel=R`, `szx=E`).
fn parse_codec(s: &str) -> Result<Codec, String> {
    match collectives::config::parse_codec(s).map_err(|e| e.to_string())? {
        c @ Codec::Szx { layout: SzxLayout::Plain, .. } => Ok(c),
        _ => Err(format!("codec {s:?}: the model calibrates SZx only")),
    }
}

/// Seconds of the fastest of three runs.
fn best_of(mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..REPEATS {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Bytes of one operand per second of `a[i] += b[i]` over 64 MiB of f32.
fn reduce_throughput() -> f64 {
    let mut a = vec![1.0f32; VALUES];
    let b = vec![0.5f32; VALUES];
    let secs = best_of(|| {
        a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
        std::hint::black_box(&a);
        Ok(())
    })
    .expect("infallible");
    (VALUES * 4) as f64 / secs
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_host::ErrorBound;

    #[test]
    fn codec_strings_parse() {
        assert_eq!(parse_codec("szx-rel=1e-3"), Ok(Codec::szx(ErrorBound::Rel(1e-3))));
        assert_eq!(parse_codec("szx=0.5"), Ok(Codec::szx(ErrorBound::Abs(0.5))));
        for bad in ["szx", "szx-rel=x", "zfp-rate=8"] {
            assert!(parse_codec(bad).is_err(), "{bad}");
        }
    }
}
