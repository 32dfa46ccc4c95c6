//! The frame: the small header every compressed message carries, then its payload.
//!
//! ```text
//! offset size field
//!  0     2    magic 0x4343 ("CC"), little-endian
//!  2     1    version (1)
//!  3     1    flags: 1 RAW (payload = values, little-endian), 2 FAILED (the sender's call
//!             had failed), 4 FALLBACK (RAW because the codec rejected the values),
//!             8 ANNOUNCE (a point-to-point transfer's announcement: index = chunk
//!             size, pieces and count of the whole transfer; payload = the sender's
//!             bound, f64, and algorithm, u64)
//!  4     1    operation (CollOp index)
//!  5     1    element type (0 f32, 1 f64)
//!  6     2    reserved, 0
//!  8     4    codec fingerprint (identifies the codec and its parameters)
//! 12     4    index: piece number in a pipelined message, or block (rank) number
//! 16     4    pieces: how many pieces the message has
//! 20     4    payload length in bytes
//! 24     8    count: values in this frame (or, with ANNOUNCE, in the whole transfer)
//! 32          payload
//! ```
//!
//! A receiver checks every field against what it expects for that message. The
//! pipelined schedules send one frame per message; the bundles of the `cpr-p2p`
//! schedules hold a message's pieces back to back, at least one frame even for no
//! values. An empty bundle is a sender whose call failed before it held anything to
//! frame (a buffer it could not allocate): the receiver records `PeerFailed` and goes
//! on with its schedule.

use codec_host::{Codec, ElemType};

use crate::CollOp;

/// Bytes of a frame header.
pub(crate) const HEADER_LEN: usize = 32;
const MAGIC: u16 = 0x4343;
const VERSION: u8 = 1;

/// Payload is the values, uncompressed.
pub(crate) const RAW: u8 = 1;
/// The sender's call had already failed: the payload must not be trusted.
pub(crate) const FAILED: u8 = 2;
/// RAW because the codec refused the values (ZFP and NaN/Inf, or a piece that missed
/// the tolerance or would decode as infinity).
pub(crate) const FALLBACK: u8 = 4;
/// Announces a point-to-point transfer (`count` values in `pieces` frames).
pub(crate) const ANNOUNCE: u8 = 8;

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub flags: u8,
    pub op: CollOp,
    pub elem: ElemType,
    pub codec: u32,
    pub index: u32,
    pub pieces: u32,
    pub payload: u32,
    pub count: u64,
}

/// What a receiver expects of a frame; `None` fields are not checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expect {
    pub op: CollOp,
    pub elem: ElemType,
    pub codec: u32,
    pub index: Option<u32>,
    pub pieces: Option<u32>,
    pub count: Option<u64>,
}

impl Header {
    /// Appends the encoded header.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.push(VERSION);
        out.push(self.flags);
        out.push(op_code(self.op));
        out.push(match self.elem {
            ElemType::F32 => 0,
            ElemType::F64 => 1,
        });
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.codec.to_le_bytes());
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.pieces.to_le_bytes());
        out.extend_from_slice(&self.payload.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
    }

    /// Decodes the header at the start of `bytes` and checks that its payload is there.
    pub fn read(bytes: &[u8]) -> Result<Header, String> {
        if bytes.len() < HEADER_LEN {
            return Err(format!("{} bytes, shorter than a frame header", bytes.len()));
        }
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        if u16_at(0) != MAGIC {
            return Err(format!("bad magic {:#06x}", u16_at(0)));
        }
        if bytes[2] != VERSION {
            return Err(format!("frame version {} (this library reads {VERSION})", bytes[2]));
        }
        let op = *CollOp::ALL.get(bytes[4] as usize).ok_or_else(|| format!("unknown operation code {}", bytes[4]))?;
        let elem = match bytes[5] {
            0 => ElemType::F32,
            1 => ElemType::F64,
            e => return Err(format!("unknown element type code {e}")),
        };
        let header = Header {
            flags: bytes[3],
            op,
            elem,
            codec: u32_at(8),
            index: u32_at(12),
            pieces: u32_at(16),
            payload: u32_at(20),
            count: u64::from_le_bytes(bytes[24..32].try_into().expect("8 bytes")),
        };
        if bytes.len() - HEADER_LEN < header.payload as usize {
            return Err(format!("payload of {} bytes declared, {} present", header.payload, bytes.len() - HEADER_LEN));
        }
        if header.flags & RAW != 0 && header.count.checked_mul(elem.size() as u64) != Some(header.payload as u64) {
            return Err(format!("raw payload of {} bytes for {} values of {elem}", header.payload, header.count));
        }
        Ok(header)
    }

    /// Checks the header against `want`.
    pub fn check(&self, want: &Expect) -> Result<(), String> {
        let mismatch = |field: &str, got: u64, exp: u64| Err(format!("{field} is {got}, expected {exp}"));
        if self.op != want.op {
            return Err(format!("operation is {}, expected {}", self.op, want.op));
        }
        if self.elem != want.elem {
            return Err(format!("element type is {}, expected {}", self.elem, want.elem));
        }
        if self.codec != want.codec {
            return mismatch("codec fingerprint", self.codec.into(), want.codec.into());
        }
        for (field, got, exp) in [
            ("index", u64::from(self.index), want.index.map(u64::from)),
            ("piece count", u64::from(self.pieces), want.pieces.map(u64::from)),
            ("value count", self.count, want.count),
        ] {
            if let Some(exp) = exp.filter(|&e| e != got) {
                return mismatch(field, got, exp);
            }
        }
        Ok(())
    }

    /// Bytes of the frame, header included.
    pub fn frame_len(&self) -> usize {
        HEADER_LEN + self.payload as usize
    }
}

fn op_code(op: CollOp) -> u8 {
    CollOp::ALL.iter().position(|&o| o == op).expect("every op is listed") as u8
}

/// A 32-bit fingerprint of a codec and its parameters (FNV-1a of its `Debug` form, which
/// spells out the variant and every parameter's exact value).
pub(crate) fn codec_fingerprint(codec: &Codec) -> u32 {
    format!("{codec:?}").bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The frames of a bundle, each as (header, whole frame bytes).
pub(crate) fn split_bundle(mut bytes: &[u8]) -> Result<Vec<(Header, &[u8])>, String> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let h = Header::read(bytes)?;
        let (frame, rest) = bytes.split_at(h.frame_len());
        frames.push((h, frame));
        bytes = rest;
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            flags: RAW,
            op: CollOp::Gather,
            elem: ElemType::F64,
            codec: 0xdead_beef,
            index: 3,
            pieces: 7,
            payload: 16,
            count: 2,
        }
    }

    #[test]
    fn header_round_trips() {
        let mut bytes = Vec::new();
        header().write(&mut bytes);
        assert_eq!(bytes.len(), HEADER_LEN);
        bytes.extend_from_slice(&[0; 16]);
        assert_eq!(Header::read(&bytes).unwrap(), header());
        assert_eq!(&bytes[..3], &[0x43, 0x43, 1]);
    }

    #[test]
    fn reader_rejects_every_inconsistency() {
        let mut good = Vec::new();
        header().write(&mut good);
        good.extend_from_slice(&[0; 16]);
        assert!(Header::read(&good[..HEADER_LEN + 15]).unwrap_err().contains("payload"));
        assert!(Header::read(&good[..10]).is_err());
        for (offset, value) in [(0, 0u8), (2, 9), (4, 200), (5, 7), (24, 3)] {
            let mut bad = good.clone();
            bad[offset] = value;
            assert!(Header::read(&bad).is_err(), "byte {offset} = {value}");
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        // A small LCG: deterministic, no dependency.
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u8
        };
        let mut template = Vec::new();
        header().write(&mut template);
        template.extend_from_slice(&[0; 16]);
        for case in 0..20_000 {
            let mut bytes = template.clone();
            if case % 2 == 0 {
                let len = next() as usize % 64;
                bytes = (0..len).map(|_| next()).collect();
            } else {
                let i = next() as usize % bytes.len();
                bytes[i] ^= 1 << (next() % 8);
                bytes.truncate(HEADER_LEN + next() as usize % 20);
            }
            let _ = split_bundle(&bytes);
        }
    }

    #[test]
    fn check_names_the_differing_field() {
        let h = header();
        let want = Expect {
            op: CollOp::Gather,
            elem: ElemType::F64,
            codec: 0xdead_beef,
            index: Some(3),
            pieces: None,
            count: Some(2),
        };
        assert!(h.check(&want).is_ok());
        assert!(h.check(&Expect { count: Some(5), ..want }).unwrap_err().contains("value count"));
        assert!(h.check(&Expect { elem: ElemType::F32, ..want }).unwrap_err().contains("element type"));
        assert!(h.check(&Expect { codec: 1, ..want }).unwrap_err().contains("codec"));
        assert!(h.check(&Expect { op: CollOp::Bcast, ..want }).unwrap_err().contains("operation"));
    }

    #[test]
    fn bundles_split_into_frames() {
        let mut bundle = Vec::new();
        for index in 0..3u32 {
            Header { index, payload: 8, count: 1, ..header() }.write(&mut bundle);
            bundle.extend_from_slice(&[index as u8; 8]);
        }
        let frames = split_bundle(&bundle).unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[2].0.index, 2);
        assert_eq!(frames[2].1.len(), HEADER_LEN + 8);
        assert!(split_bundle(&bundle[..bundle.len() - 1]).is_err());
        assert_eq!(codec_fingerprint(&Codec::zfp_rate(8.0)), codec_fingerprint(&Codec::zfp_rate(8.0)));
        assert_ne!(codec_fingerprint(&Codec::zfp_rate(8.0)), codec_fingerprint(&Codec::zfp_rate(8.5)));
    }
}
