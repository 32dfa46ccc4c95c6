//! The `CCOLL_*` environment variables: parsing, validation, and the per-variable
//! fingerprints that the ranks compare at `MPI_Init`.

use codec_host::{Codec, ErrorBound, Shape, CODEC_FORMS};
use collectives::config::{parse_codec, select};
use collectives::{CollConfig, CollOp, ENV_ALGORITHM};

use crate::ops::{Collective, Operator};

/// The codec; unset (or empty) means that nothing is compressed.
pub const ENV_CODEC: &str = "CCOLL_CODEC";
/// Smallest message (bytes) that is compressed.
pub const ENV_MIN_BYTES: &str = "CCOLL_MIN_BYTES";
/// The collectives and reduction operators that may be compressed.
pub const ENV_OPS: &str = "CCOLL_OPS";
/// `1`: rank 0 prints the report at `MPI_Finalize`.
pub const ENV_REPORT: &str = "CCOLL_REPORT";
/// `1`: one line per compressed call; `2`: also one per call passed to MPI.
pub const ENV_VERBOSE: &str = "CCOLL_VERBOSE";

/// Default of [`ENV_MIN_BYTES`]: 1 MiB.
pub const DEFAULT_MIN_BYTES: usize = 1 << 20;

/// A variable whose value cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{var}={value:?} is not valid ({reason}); accepted: {accepted}")]
pub struct InvalidSetting {
    pub var: &'static str,
    pub value: String,
    pub reason: String,
    pub accepted: String,
}

/// The settings in force on this rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `None`: nothing is compressed.
    pub codec: Option<Codec>,
    pub min_bytes: usize,
    /// Enabled collectives, by [`Collective::ALL`] position.
    pub collectives: [bool; Collective::ALL.len()],
    /// Enabled reduction operators, by [`Operator::ALL`] position.
    pub operators: [bool; Operator::ALL.len()],
    /// The value of `CCOLL_ALGORITHM` (checked; the collectives read it per call).
    pub algorithm: String,
    pub report: bool,
    pub verbose: u8,
}

impl Settings {
    /// The settings of this process's environment.
    pub fn from_env() -> Result<Settings, InvalidSetting> {
        Settings::from_lookup(|name| std::env::var(name).ok())
    }

    /// The settings from `get(name)` (the value of a variable, if set). An empty value
    /// counts as unset.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Settings, InvalidSetting> {
        let get = |name: &str| get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let (mut collectives, mut operators) = ([true; Collective::ALL.len()], [true; Operator::ALL.len()]);
        if let Some(v) = get(ENV_OPS) {
            (collectives, operators) = parse_ops(&v)?;
        }
        Ok(Settings {
            codec: get(ENV_CODEC).map(|v| parse_checked_codec(&v)).transpose()?,
            min_bytes: get(ENV_MIN_BYTES).map_or(Ok(DEFAULT_MIN_BYTES), |v| parse_bytes(&v))?,
            collectives,
            operators,
            algorithm: get(ENV_ALGORITHM).map_or(Ok("auto".to_string()), |v| check_algorithm(&v).map(|()| v))?,
            report: get(ENV_REPORT).map_or(Ok(false), |v| parse_level(ENV_REPORT, &v, 1).map(|l| l == 1))?,
            verbose: get(ENV_VERBOSE).map_or(Ok(0), |v| parse_level(ENV_VERBOSE, &v, 2))?,
        })
    }

    /// Every variable with its value in canonical form, in a fixed order: what the ranks
    /// compare, and what the report's settings line shows.
    pub fn canonical(&self) -> [(&'static str, String); 6] {
        [
            (ENV_CODEC, self.codec.map_or("unset".to_string(), |c| c.to_string())),
            (ENV_MIN_BYTES, self.min_bytes.to_string()),
            (ENV_OPS, self.ops_list()),
            (ENV_ALGORITHM, self.algorithm.clone()),
            (ENV_REPORT, u8::from(self.report).to_string()),
            (ENV_VERBOSE, self.verbose.to_string()),
        ]
    }

    /// A 64-bit fingerprint of each variable's canonical value, in [`Settings::canonical`]
    /// order.
    pub fn fingerprints(&self) -> [(&'static str, u64); 6] {
        self.canonical().map(|(name, value)| (name, fnv1a(value.as_bytes())))
    }

    fn ops_list(&self) -> String {
        let colls = Collective::ALL.iter().zip(self.collectives).filter(|(_, on)| *on).map(|(c, _)| c.name());
        let opers = Operator::ALL.iter().zip(self.operators).filter(|(_, on)| *on).map(|(o, _)| o.name());
        colls.chain(opers).collect::<Vec<_>>().join(",")
    }

    /// True if calls of `coll` (with reduction `op`) may be compressed.
    pub fn enabled(&self, coll: Collective, op: Option<Operator>) -> bool {
        self.collectives[coll as usize] && op.is_none_or(|o| self.operators[o as usize])
    }

    /// The collectives' settings for compressed calls. Below 32 KiB the collectives send
    /// a pipeline chunk uncompressed (and pick MPI's own algorithm for small blocks); a
    /// lower `CCOLL_MIN_BYTES` lowers that threshold too, so that it does what it says.
    pub fn coll_config(&self) -> Option<CollConfig> {
        self.codec.map(|codec| {
            let mut cfg = CollConfig::new(codec);
            cfg.min_bytes_to_compress = cfg.min_bytes_to_compress.min(self.min_bytes);
            cfg
        })
    }
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A codec spec as `ccoll` accepts it, whose parameters the codec takes: a trial
/// compression of a small ramp finds out-of-range values now rather than at the first
/// large call.
fn parse_checked_codec(v: &str) -> Result<Codec, InvalidSetting> {
    let accepted = || format!("{} (also szx:E, szx-rel:R, zfp-acc:T)", CODEC_FORMS.join(", "));
    let invalid = |reason: String| InvalidSetting { var: ENV_CODEC, value: v.to_string(), reason, accepted: accepted() };
    let codec = parse_codec(v).map_err(|_| invalid("not a codec spec".into()))?;
    let ramp: Vec<f32> = (0..1024u16).map(|i| f32::from(i) * 0.25).collect();
    codec.compress(&ramp, Shape::d1(ramp.len()), &codec_host::Backend::cpu()).map_err(|e| invalid(e.to_string()))?;
    Ok(codec)
}

/// Bytes: a count, optionally followed by K, M or G (powers of 2^10).
fn parse_bytes(v: &str) -> Result<usize, InvalidSetting> {
    let invalid = |reason: &str| InvalidSetting {
        var: ENV_MIN_BYTES,
        value: v.to_string(),
        reason: reason.to_string(),
        accepted: "a byte count, optionally with a K, M or G suffix (2^10, 2^20, 2^30): 0, 65536, 64K, 1M".into(),
    };
    let (digits, shift) = match v.as_bytes().last().map(u8::to_ascii_uppercase) {
        Some(b'K') => (&v[..v.len() - 1], 10),
        Some(b'M') => (&v[..v.len() - 1], 20),
        Some(b'G') => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    let n: usize = digits.trim().parse().map_err(|_| invalid("not a count"))?;
    n.checked_mul(1 << shift).ok_or_else(|| invalid("too large"))
}

/// A comma list of collectives and reduction operators: the collectives named (all if
/// none is) with the operators named (all if none is).
fn parse_ops(v: &str) -> Result<([bool; Collective::ALL.len()], [bool; Operator::ALL.len()]), InvalidSetting> {
    let names = || Collective::ALL.iter().map(|c| c.name()).chain(Operator::ALL.iter().map(|o| o.name())).collect::<Vec<_>>();
    let invalid = |reason: String| InvalidSetting {
        var: ENV_OPS,
        value: v.to_string(),
        reason,
        accepted: format!("a comma list of {}", names().join(", ")),
    };
    let (mut colls, mut opers) = ([false; Collective::ALL.len()], [false; Operator::ALL.len()]);
    for item in v.split(',').map(|s| s.trim().to_ascii_lowercase()) {
        let item = item.strip_prefix("mpi_").unwrap_or(&item);
        if let Some(c) = Collective::ALL.iter().find(|c| c.name() == item) {
            colls[*c as usize] = true;
        } else if let Some(o) = Operator::ALL.iter().find(|o| o.name() == item) {
            opers[*o as usize] = true;
        } else {
            return Err(invalid(format!("unknown name {item:?}")));
        }
    }
    if !colls.contains(&true) {
        colls = [true; Collective::ALL.len()];
    }
    if !opers.contains(&true) {
        opers = [true; Operator::ALL.len()];
    }
    Ok((colls, opers))
}

/// `CCOLL_ALGORITHM` as the collectives read it: every operation's selection must
/// accept it.
fn check_algorithm(v: &str) -> Result<(), InvalidSetting> {
    let cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3)));
    // Point-to-point is not interposed.
    let mut ops = CollOp::ALL.into_iter().filter(|&op| op != CollOp::P2p);
    ops.try_for_each(|op| select(op, 1 << 30, 4, &cfg, Some(v)).map(drop)).map_err(|e| InvalidSetting {
        var: ENV_ALGORITHM,
        value: v.to_string(),
        reason: e.to_string(),
        accepted: "auto, mpi, cpr-p2p, c-coll, ring, rd, hier, or a comma list of OP=ALGORITHM with OP one of \
                   allreduce, reduce-scatter, reduce, bcast, scatter, gather, allgather, alltoall"
            .into(),
    })
}

/// `0`..=`max`.
fn parse_level(var: &'static str, v: &str, max: u8) -> Result<u8, InvalidSetting> {
    v.parse::<u8>().ok().filter(|&l| l <= max).ok_or_else(|| InvalidSetting {
        var,
        value: v.to_string(),
        reason: "not a level".into(),
        accepted: (0..=max).map(|l| l.to_string()).collect::<Vec<_>>().join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Settings, InvalidSetting> {
        Settings::from_lookup(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn defaults_compress_nothing() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.codec, None);
        assert_eq!(s.min_bytes, 1 << 20);
        assert!(s.collectives.iter().chain(&s.operators).all(|&on| on));
        assert_eq!((s.algorithm.as_str(), s.report, s.verbose), ("auto", false, 0));
        assert!(s.coll_config().is_none());
        assert_eq!(settings(&[(ENV_CODEC, "  ")]).unwrap().codec, None);
    }

    #[test]
    fn values_parse() {
        let s = settings(&[
            (ENV_CODEC, "szx:1e-3"),
            (ENV_MIN_BYTES, "64K"),
            (ENV_OPS, "Allreduce, MPI_BCAST,sum"),
            (ENV_ALGORITHM, "allreduce=ring"),
            (ENV_REPORT, "1"),
            (ENV_VERBOSE, "2"),
        ])
        .unwrap();
        assert_eq!(s.codec, Some(Codec::szx(ErrorBound::Abs(1e-3))));
        assert_eq!(s.min_bytes, 64 << 10);
        assert!(s.enabled(Collective::Allreduce, Some(Operator::Sum)));
        assert!(!s.enabled(Collective::Allreduce, Some(Operator::Max)));
        assert!(s.enabled(Collective::Bcast, None));
        assert!(!s.enabled(Collective::Alltoall, None));
        assert_eq!((s.report, s.verbose), (true, 2));
        assert_eq!(s.coll_config().unwrap().min_bytes_to_compress, 32 << 10);
        assert_eq!(settings(&[(ENV_CODEC, "zfp-tol=1e-4"), (ENV_MIN_BYTES, "100")]).unwrap().coll_config().unwrap().min_bytes_to_compress, 100);
        assert_eq!(settings(&[(ENV_MIN_BYTES, "2m")]).unwrap().min_bytes, 2 << 20);
        let only_max = settings(&[(ENV_OPS, "max")]).unwrap();
        assert!(only_max.enabled(Collective::Gather, None) && !only_max.enabled(Collective::Reduce, Some(Operator::Prod)));
    }

    #[test]
    fn invalid_values_name_the_variable_and_the_accepted_forms() {
        let cases = [
            (ENV_CODEC, "lz4=1", "szx-rel=R"),
            (ENV_CODEC, "szx=-1", "zfp-tol=T"),
            (ENV_CODEC, "szx-pipelined=1e-3,100", "szx=E"),
            (ENV_MIN_BYTES, "1.5M", "64K"),
            (ENV_MIN_BYTES, "99999999999999999999G", "64K"),
            (ENV_OPS, "allreduce,sendrecv", "reduce_scatter_block"),
            (ENV_ALGORITHM, "fast", "c-coll"),
            (ENV_ALGORITHM, "bcast=ring", "OP=ALGORITHM"),
            (ENV_REPORT, "yes", "0, 1"),
            (ENV_VERBOSE, "3", "0, 1, 2"),
        ];
        for (var, value, accepted) in cases {
            let e = settings(&[(var, value)]).unwrap_err();
            assert_eq!((e.var, e.value.as_str()), (var, value));
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("{var}={value:?}")) && msg.contains(accepted), "{msg}");
        }
    }

    #[test]
    fn fingerprints_follow_the_canonical_value() {
        let a = settings(&[(ENV_CODEC, "szx:1e-3")]).unwrap().fingerprints();
        let b = settings(&[(ENV_CODEC, "szx=0.001")]).unwrap().fingerprints();
        let c = settings(&[(ENV_CODEC, "szx=0.002")]).unwrap().fingerprints();
        assert_eq!(a, b);
        assert_ne!(a[0], c[0]);
        assert_eq!(a[1..], c[1..]);
        assert_eq!(settings(&[(ENV_OPS, "bcast")]).unwrap().canonical()[2].1, "bcast,sum,min,max,prod");
    }
}
