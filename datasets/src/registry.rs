//! Data sets by name, and the `NAME | raw:PATH:DIMS[:TYPE]` spec that benchmark tools
//! take on their command line.

use crate::climate::{cesm_ts, sea_ice_fraction, CESM_DIMS};
use crate::generate::{laplace_gradients, smooth3d_grid, DEFAULT_SEED};
use crate::gradients::{dl_gradients, to_bf16, GRAD_LEN};
use crate::grid::fit_dims;
use crate::raw::{dims_len, read_raw};
use crate::seismic::{rtm_wavefield, RTM_DIMS};
use crate::weather::{hurricane_u, HURRICANE_DIMS};
use crate::{Error, Result};
use half::bf16;
use std::path::PathBuf;

/// A field's values in their element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bf16(Vec<bf16>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bf16(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element type name: "f32", "f64" or "bf16".
    pub fn elem_name(&self) -> &'static str {
        match self {
            Values::F32(_) => "f32",
            Values::F64(_) => "f64",
            Values::Bf16(_) => "bf16",
        }
    }

    /// The values converted to f32 (f64 rounds to nearest).
    pub fn to_f32(&self) -> Vec<f32> {
        match self {
            Values::F32(v) => v.clone(),
            Values::F64(v) => v.iter().map(|&x| x as f32).collect(),
            Values::Bf16(v) => v.iter().map(|x| x.to_f32()).collect(),
        }
    }

    /// The values converted to f64 (exact).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Values::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::F64(v) => v.clone(),
            Values::Bf16(v) => v.iter().map(|x| x.to_f64()).collect(),
        }
    }

    /// Repeats or truncates the values to exactly `len` (a cyclic tiling).
    fn cycled(&self, len: usize) -> Values {
        fn cyc<T: Copy>(v: &[T], len: usize) -> Vec<T> {
            v.iter().copied().cycle().take(len).collect()
        }
        match self {
            Values::F32(v) => Values::F32(cyc(v, len)),
            Values::F64(v) => Values::F64(cyc(v, len)),
            Values::Bf16(v) => Values::Bf16(cyc(v, len)),
        }
    }
}

/// A named field with its dimensions (x fastest, like `codec_host::Shape`).
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub name: String,
    pub dims: Vec<usize>,
    pub values: Values,
}

/// The built-in generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Smooth3d,
    Grad16m,
    Rtm,
    Hurricane,
    Cesm,
    SeaIce,
    Grad,
    GradBf16,
}

impl Named {
    pub const ALL: [Named; 8] =
        [Named::Smooth3d, Named::Grad16m, Named::Rtm, Named::Hurricane, Named::Cesm, Named::SeaIce, Named::Grad, Named::GradBf16];

    /// The name used on command lines.
    pub fn name(self) -> &'static str {
        match self {
            Named::Smooth3d => "smooth3d",
            Named::Grad16m => "grad16m",
            Named::Rtm => "rtm",
            Named::Hurricane => "hurricane",
            Named::Cesm => "cesm",
            Named::SeaIce => "seaice",
            Named::Grad => "grad",
            Named::GradBf16 => "grad-bf16",
        }
    }

    pub fn from_name(name: &str) -> Option<Named> {
        Named::ALL.into_iter().find(|n| n.name() == name)
    }

    /// One line saying what the field is.
    pub fn summary(self) -> &'static str {
        match self {
            Named::Smooth3d => "four sinusoids + N(0, 1e-3) noise (reference-figures definition), f32",
            Named::Grad16m => "Laplace(0, 1e-3) with 10% exact zeros (reference-figures definition), f32",
            Named::Rtm => "RTM-like seismic wavefield snapshot: Ricker fronts in a layered medium, f32",
            Named::Hurricane => "hurricane-like U wind: tilted vortex + shear + k^-5/3 turbulence, f32",
            Named::Cesm => "CESM-like surface temperature: zonal bands, continents, sea ice, f32",
            Named::SeaIce => "sea-ice fraction: exact 0 (ocean, land) and 1 (pack), ragged marginal zone, f32",
            Named::Grad => "deep-learning-like gradients: multi-scale Student-t layers, sparse rows, f32",
            Named::GradBf16 => "the grad values rounded to bfloat16",
        }
    }

    /// The dimensions of the default-size field (x fastest).
    pub fn default_dims(self) -> Vec<usize> {
        match self {
            Named::Smooth3d | Named::Rtm => RTM_DIMS.to_vec(),
            Named::Hurricane => HURRICANE_DIMS.to_vec(),
            Named::Cesm | Named::SeaIce => CESM_DIMS.to_vec(),
            Named::Grad16m | Named::Grad | Named::GradBf16 => vec![GRAD_LEN],
        }
    }

    /// The field at its default size and seed.
    pub fn generate_default(self) -> Dataset {
        self.generate(&self.default_dims(), DEFAULT_SEED).expect("default dims have the generator's rank")
    }

    /// The field with exactly `len` values, on a grid shaped like the default one.
    pub fn generate_len(self, len: usize, seed: u64) -> Dataset {
        let aspect: Vec<f64> = self.default_dims().iter().map(|&d| d as f64).collect();
        self.generate(&fit_dims(len, &aspect), seed).expect("fit_dims keeps the rank")
    }

    /// The field on `dims` (x fastest; as many as the default dims have).
    pub fn generate(self, dims: &[usize], seed: u64) -> Result<Dataset> {
        let rank = self.default_dims().len();
        if dims.len() != rank {
            return Err(Error::BadDims { dims: dims.to_vec(), why: "wrong number of dimensions for this generator" });
        }
        let len: usize = dims.iter().product();
        let d3 = || [dims[0], dims[1], dims[2]];
        let values = match self {
            Named::Smooth3d => Values::F32(smooth3d_grid(d3(), 1e-3, seed)),
            Named::Grad16m => Values::F32(laplace_gradients(len, 1e-3, 0.1, seed)),
            Named::Rtm => Values::F32(rtm_wavefield(d3(), seed)),
            Named::Hurricane => Values::F32(hurricane_u(d3(), seed)),
            Named::Cesm => Values::F32(cesm_ts([dims[0], dims[1]], seed)),
            Named::SeaIce => Values::F32(sea_ice_fraction([dims[0], dims[1]], seed)),
            Named::Grad => Values::F32(dl_gradients(len, seed)),
            Named::GradBf16 => Values::Bf16(to_bf16(&dl_gradients(len, seed))),
        };
        Ok(Dataset { name: self.name().to_string(), dims: dims.to_vec(), values })
    }
}

/// The named field at its default size and seed.
pub fn by_name(name: &str) -> Result<Dataset> {
    Named::from_name(name).map(Named::generate_default).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> Error {
    let known = Named::ALL.map(Named::name).join(", ");
    Error::UnknownName { name: name.to_string(), known }
}

/// Element type of a raw file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawType {
    F32,
    F64,
}

/// Where a benchmark's data comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    Named(Named),
    /// A raw little-endian file; `dims` x fastest.
    Raw { path: PathBuf, dims: Vec<usize>, elem: RawType },
}

/// Parses `NAME` or `raw:PATH:DIMS[:f32|f64]`.
///
/// DIMS are written as SDRBench lists them, slowest first and separated by `x`
/// (`raw:Uf48.bin.f32:100x500x500`); [`Spec::Raw`] stores them x fastest. The element
/// type is f32 unless given, or unless PATH ends in `.f64` / `.d64`. PATH may itself
/// contain colons: the fields are split from the right.
pub fn parse_spec(spec: &str) -> Result<Spec> {
    let Some(rest) = spec.strip_prefix("raw:") else {
        return Named::from_name(spec).map(Spec::Named).ok_or_else(|| unknown(spec));
    };
    let bad = |why: &str| Error::BadSpec { spec: spec.to_string(), why: why.to_string() };
    let (rest, elem) = match rest.rsplit_once(':') {
        Some((r, "f32")) => (r, Some(RawType::F32)),
        Some((r, "f64")) => (r, Some(RawType::F64)),
        _ => (rest, None),
    };
    let (path, dims_text) = rest.rsplit_once(':').ok_or_else(|| bad("expected raw:PATH:DIMS[:f32|f64]"))?;
    if path.is_empty() {
        return Err(bad("empty path"));
    }
    let mut dims = dims_text
        .split('x')
        .map(|d| d.trim().parse::<usize>().map_err(|_| bad(&format!("dimension {d:?} is not a number"))))
        .collect::<Result<Vec<_>>>()?;
    dims.reverse();
    dims_len(&dims)?;
    let elem = elem.unwrap_or(if path.ends_with(".f64") || path.ends_with(".d64") { RawType::F64 } else { RawType::F32 });
    Ok(Spec::Raw { path: PathBuf::from(path), dims, elem })
}

impl Spec {
    /// The data set as the spec names it: a generator at its default size, or the file.
    pub fn load(&self) -> Result<Dataset> {
        match self {
            Spec::Named(n) => Ok(n.generate_default()),
            Spec::Raw { path, dims, elem } => {
                let values = match elem {
                    RawType::F32 => Values::F32(read_raw(path, dims)?),
                    RawType::F64 => Values::F64(read_raw(path, dims)?),
                };
                Ok(Dataset { name: path.display().to_string(), dims: dims.clone(), values })
            }
        }
    }

    /// Exactly `len` values: a generator runs at that size (with `seed`); a file is read
    /// whole and tiled cyclically or truncated, its dims then becoming `[len]`.
    pub fn load_len(&self, len: usize, seed: u64) -> Result<Dataset> {
        match self {
            Spec::Named(n) => Ok(n.generate_len(len, seed)),
            Spec::Raw { .. } => {
                let whole = self.load()?;
                if whole.values.len() == len {
                    return Ok(whole);
                }
                Ok(Dataset { name: whole.name, dims: vec![len], values: whole.values.cycled(len) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::write_raw;

    #[test]
    fn names_round_trip_and_unknown_names_are_typed_errors() {
        for n in Named::ALL {
            assert_eq!(Named::from_name(n.name()), Some(n));
            assert_eq!(parse_spec(n.name()).unwrap(), Spec::Named(n));
        }
        match by_name("nope") {
            Err(Error::UnknownName { name, known }) => {
                assert_eq!(name, "nope");
                assert!(known.contains("rtm") && known.contains("grad-bf16"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn generate_len_gives_exact_lengths_and_shapes() {
        let d = Named::Rtm.generate_len(6000, 1);
        assert_eq!(d.values.len(), 6000);
        assert_eq!(d.dims.iter().product::<usize>(), 6000);
        assert_eq!(d.dims.len(), 3);
        let d = Named::Cesm.generate_len(2 * 50 * 50, 1);
        assert_eq!(d.dims, vec![100, 50]);
        let d = Named::GradBf16.generate_len(1000, 2);
        assert_eq!(d.values.elem_name(), "bf16");
        assert_eq!(d.values.to_f32().len(), 1000);
        assert_eq!(Named::Grad16m.generate_len(10, 3).dims, vec![10]);
        assert!(matches!(Named::Cesm.generate(&[4, 4, 4], 1), Err(Error::BadDims { .. })));
        // The smooth3d generator agrees with the reference definition on cubes.
        let s = Named::Smooth3d.generate(&[16, 16, 16], 9).unwrap();
        assert_eq!(s.values, Values::F32(crate::smooth3d_field(16, 1e-3, 9)));
    }

    #[test]
    fn raw_specs_parse_from_the_right_and_load() {
        let s = parse_spec("raw:/data/Uf48.bin.f32:100x500x500").unwrap();
        assert_eq!(s, Spec::Raw { path: "/data/Uf48.bin.f32".into(), dims: vec![500, 500, 100], elem: RawType::F32 });
        let s = parse_spec("raw:c:/odd:path.d64:3x4").unwrap();
        assert_eq!(s, Spec::Raw { path: "c:/odd:path.d64".into(), dims: vec![4, 3], elem: RawType::F64 });
        let s = parse_spec("raw:x.bin:8:f64").unwrap();
        assert_eq!(s, Spec::Raw { path: "x.bin".into(), dims: vec![8], elem: RawType::F64 });
        for bad in ["raw:", "raw:file", "raw::10", "raw:f:10xy", "raw:f:0x3", "raw:f:-1"] {
            assert!(
                matches!(parse_spec(bad), Err(Error::BadSpec { .. } | Error::BadDims { .. })),
                "{bad} -> {:?}",
                parse_spec(bad)
            );
        }

        let p = std::env::temp_dir().join(format!("datasets-spec-{}.f64", std::process::id()));
        write_raw(&p, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let spec = parse_spec(&format!("raw:{}:2x3", p.display())).unwrap();
        let d = spec.load().unwrap();
        assert_eq!((d.dims.clone(), d.values.elem_name()), (vec![3, 2], "f64"));
        let d = spec.load_len(8, 0).unwrap();
        assert_eq!(d.dims, vec![8]);
        assert_eq!(d.values.to_f64(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0]);
        assert_eq!(spec.load_len(6, 0).unwrap().dims, vec![3, 2]);
        let wrong = parse_spec(&format!("raw:{}:7", p.display())).unwrap();
        assert!(matches!(wrong.load(), Err(Error::SizeMismatch { expected: 56, actual: 48, .. })));
        std::fs::remove_file(&p).unwrap();
    }
}
