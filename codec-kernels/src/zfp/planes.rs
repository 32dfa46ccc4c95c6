//! The embedded bit-plane coder with group testing (zfp's `encode_ints`/`decode_ints`),
//! and the bit-matrix transpose that turns a block's coefficients into bit planes.
//!
//! Plane `k` of a block is a `u64` whose bit `i` is bit `k` of coefficient `i`. zfp
//! extracts each plane with one shift-and-mask per coefficient; here the whole block is
//! transposed at once by recursive block swaps (log2 S rounds over S rows), which is
//! several times cheaper and has no data-dependent branches.
//!
//! Row layout (S = min(N, W) for N coefficients of W bits):
//! * N <= W: row r holds coefficient r; after the transpose, row `k % N` holds planes
//!   `k % N, k % N + N, ...` in lanes of N bits.
//! * N > W (64 coefficients of 32 bits): row r holds coefficients r and r + 32 in its
//!   low and high halves; after the transpose, row k is plane k.

use super::dims::Dims;
use super::scalar::Coefficient;
use crate::bitstream::{low_mask, BitReader, BitWriter, Word, WordSink};

/// Masks of the bit positions whose bit `j` is clear, indexed by `log2 j`.
const SWAP_MASKS: [u64; 6] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0f0f_0f0f_0f0f_0f0f,
    0x00ff_00ff_00ff_00ff,
    0x0000_ffff_0000_ffff,
    0x0000_0000_ffff_ffff,
];

/// One round of the transpose: swaps the off-diagonal `J x J` sub-blocks of every
/// `2J x 2J` block. `J` is a constant so that the row loop compiles to packed code.
#[inline(always)]
fn swap_round<const J: usize>(rows: &mut [u64], s: usize) {
    let m = SWAP_MASKS[J.trailing_zeros() as usize];
    for pair in rows[..s].chunks_exact_mut(2 * J) {
        let (lo, hi) = pair.split_at_mut(J);
        for (a, b) in lo.iter_mut().zip(hi) {
            // Swap (row r, column c + J) with (row r + J, column c) for columns c whose
            // bit J is clear.
            let t = ((*a >> J) ^ *b) & m;
            *b ^= t;
            *a ^= t << J;
        }
    }
}

/// Transposes, in every lane of `s` bits at once, the `s x s` bit matrix held in the
/// first `s` rows (`s` a power of two up to 64). An involution.
#[inline(always)]
fn transpose(rows: &mut [u64], s: usize) {
    if s >= 64 {
        swap_round::<32>(rows, s);
    }
    if s >= 32 {
        swap_round::<16>(rows, s);
    }
    if s >= 16 {
        swap_round::<8>(rows, s);
    }
    if s >= 8 {
        swap_round::<4>(rows, s);
    }
    if s >= 4 {
        swap_round::<2>(rows, s);
    }
    if s >= 2 {
        swap_round::<1>(rows, s);
    }
}

/// Side of the transposed square matrices.
#[inline(always)]
const fn side<U: Coefficient, D: Dims>() -> usize {
    if D::N <= U::BITS as usize {
        D::N
    } else {
        U::BITS as usize
    }
}

/// The bit planes of a block whose coefficient at (sequency) position `i` is `coef(i)`;
/// with `top_only`, only the upper half of the planes (the lower half stays zero).
#[inline(always)]
fn to_planes<U: Coefficient, D: Dims>(coef: impl Fn(usize) -> U, top_only: bool) -> D::Block<u64> {
    let s = side::<U, D>();
    let w = U::BITS as usize;
    let mut rows = D::splat(0u64);
    if D::N == 64 && top_only {
        // Rows = planes for 64 coefficients: the top half of each coefficient, as h x h
        // matrices in 64 / h lanes, transposes straight into planes h..w.
        let h = w / 2;
        let top = &mut rows.as_mut()[h..w];
        for (i, row) in top.iter_mut().enumerate() {
            for lane in 0..64 / h {
                *row |= ((coef(h * lane + i).to_u64() >> h) & low_mask(h as u32)) << (h * lane);
            }
        }
        transpose(top, h);
        return rows;
    }
    let r = rows.as_mut();
    if s == D::N {
        for (i, row) in r.iter_mut().enumerate() {
            *row = coef(i).to_u64();
        }
    } else {
        for (i, row) in r[..s].iter_mut().enumerate() {
            *row = coef(i).to_u64() | coef(i + s).to_u64() << s;
        }
    }
    transpose(r, s);
    rows
}

/// Hands the coefficients whose bit planes are `rows` (laid out as [`to_planes`] leaves
/// them) to `put(position, coefficient)`; planes below `lowest` are known to be zero.
#[inline(always)]
fn from_planes<U: Coefficient, D: Dims>(rows: &mut D::Block<u64>, lowest: u32, mut put: impl FnMut(usize, U)) {
    let s = side::<U, D>();
    let w = U::BITS as usize;
    if D::N == 64 && lowest as usize >= w / 2 {
        // 64 coefficients, rows = planes, and only the top half of the planes holds
        // bits (few planes decoded): transpose just that half, as h x h matrices in
        // 64 / h lanes. Row r, lane j then holds the top bits of coefficient h*j + r.
        let h = w / 2;
        let top = &mut rows.as_mut()[h..w];
        transpose(top, h);
        for (i, &row) in top.iter().enumerate() {
            for lane in 0..64 / h {
                put(h * lane + i, U::from_u64(((row >> (h * lane)) & low_mask(h as u32)) << h));
            }
        }
        return;
    }
    let r = rows.as_mut();
    transpose(r, s);
    if s == D::N {
        for (i, &row) in r.iter().enumerate() {
            put(i, U::from_u64(row));
        }
    } else {
        for (i, &row) in r[..s].iter().enumerate() {
            put(i, U::from_u64(row));
            put(i + s, U::from_u64(row >> s));
        }
    }
}

/// Plane `k` from the transposed rows.
#[inline(always)]
fn plane<U: Coefficient, D: Dims>(rows: &[u64], k: u32) -> u64 {
    let s = side::<U, D>();
    let k = k as usize;
    if s == D::N {
        (rows[k % s] >> (s * (k / s) % 64)) & low_mask(s as u32)
    } else {
        rows[k % s]
    }
}

/// Stores plane `k` (already zero) into the transposed rows.
#[inline(always)]
fn set_plane<U: Coefficient, D: Dims>(rows: &mut [u64], k: u32, x: u64) {
    let s = side::<U, D>();
    let k = k as usize;
    if s == D::N {
        rows[k % s] |= x << (s * (k / s) % 64);
    } else {
        rows[k % s] = x;
    }
}

/// `x >> n` for `n <= 64` (zero when everything is shifted out).
#[inline(always)]
fn shr(x: u64, n: u32) -> u64 {
    x.checked_shr(n).unwrap_or(0)
}

/// Lowest plane coded for precision `maxprec`.
#[inline(always)]
fn kmin<U: Coefficient>(maxprec: u32) -> u32 {
    U::BITS.saturating_sub(maxprec)
}

/// Most bits one plane can take with `n` coefficients already significant: `n` verbatim
/// bits, then per newly significant coefficient a group bit and its unary position
/// (at most two bits per coefficient left), then a final group bit.
#[inline(always)]
fn plane_bound(size: u32, n: u32) -> u32 {
    2 * size - n + 1
}

/// True if a whole plane can exceed 64 bits (only 64-value blocks): smaller blocks
/// never need a second register or window for one plane.
#[inline(always)]
const fn wide<D: Dims>() -> bool {
    2 * D::N + 1 > 64
}

/// Bits of one plane gathered in a register before they go to the writer.
struct Pending {
    bits: u64,
    len: u32,
    /// Bits already handed to the writer.
    written: u32,
}

impl Pending {
    /// Appends the `clen` low bits of `code` (`code < 2^clen`, `clen <= 64`).
    #[inline(always)]
    fn push<W: WordSink>(&mut self, w: &mut BitWriter<W>, code: u64, clen: u32, wide: bool) {
        if wide && self.len + clen > 64 {
            w.write_bits(self.bits, self.len);
            self.written += self.len;
            (self.bits, self.len) = (0, 0);
        }
        self.bits |= code << self.len;
        self.len += clen;
    }

    /// Writes what is left; returns all bits written for the plane.
    #[inline(always)]
    fn flush<W: WordSink>(self, w: &mut BitWriter<W>) -> u32 {
        w.write_bits(self.bits, self.len);
        self.written + self.len
    }
}

/// Group-test code for a newly significant coefficient `tz` positions past `n`: the
/// group bit 1, `tz` zeros, then the coefficient's 1, which is implied (not written)
/// for the last coefficient. Returns the code and its length.
#[inline(always)]
fn group_code(n: u32, tz: u32, size: u32) -> (u64, u32) {
    if n + tz == size - 1 {
        (1, tz + 1)
    } else {
        (1 | 2 << tz, tz + 2)
    }
}

/// Codes the planes of the coefficients `coef(0..N)` (in sequency order) from the top down to `W - maxprec`, spending at most
/// `maxbits` bits, and returns the bits written.
///
/// Per plane: the bits of the `n` coefficients already significant go out verbatim;
/// then group tests: a 1 says another coefficient becomes significant in this plane,
/// followed by its position in unary (zeros, then a 1 that is implied for the last
/// coefficient); a 0 ends the plane. zfp writes this bit by bit and stops wherever the
/// budget runs out; a plane that certainly fits is assembled in a register here and
/// written at once, and only the last, cut-off planes take the careful path.
#[inline(always)]
pub fn encode_ints<U: Coefficient, D: Dims, W: WordSink>(
    w: &mut BitWriter<W>,
    maxbits: u32,
    maxprec: u32,
    coef: impl Fn(usize) -> U,
) -> u32 {
    let kmin = kmin::<U>(maxprec);
    let rows = to_planes::<U, D>(coef, kmin >= U::BITS / 2);
    let rows = rows.as_ref();
    let size = D::N as u32;
    let mut bits = maxbits;
    let mut n = 0u32;
    let mut k = U::BITS;
    while bits >= plane_bound(size, n) && k > kmin {
        k -= 1;
        let x = plane::<U, D>(rows, k);
        // Verbatim bits first, then the group codes; flushed whenever 64 bits are full.
        let mut acc = Pending { bits: x & low_mask(n), len: n, written: 0 };
        let mut rest = shr(x, n);
        while n < size {
            if rest == 0 {
                acc.push(w, 0, 1, wide::<D>());
                break;
            }
            let tz = rest.trailing_zeros();
            let (code, clen) = group_code(n, tz, size);
            acc.push(w, code, clen, wide::<D>());
            n += tz + 1;
            rest = shr(rest >> tz, 1);
        }
        bits -= acc.flush(w);
    }
    // The careful path: every bit checked against the budget.
    while bits > 0 && k > kmin {
        k -= 1;
        let mut x = plane::<U, D>(rows, k);
        let m = n.min(bits);
        bits -= m;
        w.write_bits(x, m);
        x = shr(x, m);
        while n < size && bits > 0 {
            if x == 0 {
                w.write_bits(0, 1);
                bits -= 1;
                break;
            }
            let tz = x.trailing_zeros();
            let (code, len) = group_code(n, tz, size);
            if len >= bits {
                w.write_bits(code, bits);
                bits = 0;
                break;
            }
            w.write_bits(code, len);
            bits -= len;
            n += tz + 1;
            x = shr(x, tz + 1);
        }
    }
    maxbits - bits
}

/// Reads the planes [`encode_ints`] wrote with the same `maxbits` and `maxprec`,
/// stopping at exactly the same points, and hands each to `on_plane(k, plane)`; returns
/// the bits read. The shared core of decoding and of skipping a block.
#[inline(always)]
fn read_planes<U: Coefficient, D: Dims, R: Word>(
    r: &mut BitReader<'_, R>,
    maxbits: u32,
    maxprec: u32,
    mut on_plane: impl FnMut(u32, u64),
) -> u32 {
    let size = D::N as u32;
    let kmin = kmin::<U>(maxprec);
    let mut bits = maxbits;
    let mut n = 0u32;
    let mut k = U::BITS;
    // Planes that certainly fit the budget: the verbatim bits and the group tests are
    // taken from a 64-bit window (one group needs at most 1 + 63 bits), which is
    // consumed and refilled only when a group might not fit (the verbatim bits and
    // groups so far take at most 2n bits, so blocks below 64 values never refill).
    while bits >= plane_bound(size, n) && k > kmin {
        k -= 1;
        let mut window = r.peek_bits(64);
        let mut x = window & low_mask(n);
        let mut used = n;
        while n < size {
            let lim = size - 1 - n;
            if wide::<D>() && used + 1 + lim > 64 {
                r.read_bits(used);
                bits -= used;
                window = r.peek_bits(64);
                used = 0;
            }
            let v = window >> used;
            used += 1;
            if v & 1 == 0 {
                break;
            }
            let tz = shr(v, 1).trailing_zeros().min(lim);
            used += if tz < lim { tz + 1 } else { lim };
            n += tz;
            x |= 1 << n;
            n += 1;
        }
        r.read_bits(used);
        bits -= used;
        on_plane(k, x);
    }
    // The careful path, bit for bit against the budget.
    while bits > 0 && k > kmin {
        k -= 1;
        let m = n.min(bits);
        bits -= m;
        let mut x = r.read_bits(m);
        while n < size && bits > 0 {
            bits -= 1;
            if !r.read_bit() {
                break;
            }
            // Scan for the next 1 within the coefficients and the budget left; if none
            // is there, the 1 is implied at the end of the scan.
            let lim = (size - 1 - n).min(bits);
            let tz = r.peek_bits(lim).trailing_zeros().min(lim);
            let used = if tz < lim { tz + 1 } else { lim };
            r.read_bits(used);
            bits -= used;
            n += tz;
            x |= 1 << n;
            n += 1;
        }
        on_plane(k, x);
    }
    maxbits - bits
}

/// Decodes what [`encode_ints`] wrote with the same `maxbits` and `maxprec`; hands every
/// coefficient to `put(position, value)` and returns the bits read.
#[inline(always)]
pub fn decode_ints<U: Coefficient, D: Dims, R: Word>(
    r: &mut BitReader<'_, R>,
    maxbits: u32,
    maxprec: u32,
    put: impl FnMut(usize, U),
) -> u32 {
    let mut rows = D::splat(0u64);
    // Planes arrive from the top down: the last one seen is the lowest.
    let mut lowest = U::BITS;
    let bits = read_planes::<U, D, R>(r, maxbits, maxprec, |k, x| {
        lowest = k;
        set_plane::<U, D>(rows.as_mut(), k, x);
    });
    from_planes::<U, D>(&mut rows, lowest, put);
    bits
}

/// Moves past what [`encode_ints`] wrote, without rebuilding the coefficients; returns
/// the bits skipped.
#[inline(always)]
pub fn skip_ints<U: Coefficient, D: Dims, R: Word>(r: &mut BitReader<'_, R>, maxbits: u32, maxprec: u32) -> u32 {
    read_planes::<U, D, R>(r, maxbits, maxprec, |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::super::dims::{D1, D2, D3};
    use super::*;

    /// Plane extraction the way zfp does it, one coefficient at a time.
    fn naive_plane<U: Coefficient>(c: &[U], k: u32) -> u64 {
        c.iter().enumerate().fold(0, |x, (i, u)| x | ((u.to_u64() >> k) & 1) << i)
    }

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn check_planes<U: Coefficient, D: Dims>(seed: &mut u64) {
        let mut coef = D::splat(U::default());
        for u in coef.as_mut() {
            *u = U::from_u64(rng(seed));
        }
        let c = coef.as_ref();
        let rows = to_planes::<U, D>(|i| c[i], false);
        for k in 0..U::BITS {
            assert_eq!(plane::<U, D>(rows.as_ref(), k), naive_plane(coef.as_ref(), k), "plane {k}");
        }
        let rows = to_planes::<U, D>(|i| c[i], true);
        for k in U::BITS / 2..U::BITS {
            assert_eq!(plane::<U, D>(rows.as_ref(), k), naive_plane(coef.as_ref(), k), "top plane {k}");
        }
        let mut rebuilt = D::splat(0u64);
        for k in 0..U::BITS {
            set_plane::<U, D>(rebuilt.as_mut(), k, naive_plane(coef.as_ref(), k));
        }
        let mut back = D::splat(U::default());
        from_planes::<U, D>(&mut rebuilt, 0, |i, u| back.as_mut()[i] = u);
        assert_eq!(back.as_ref(), coef.as_ref());
        // With the low half of every coefficient clear, the half-size transpose.
        let mut top = coef;
        for u in top.as_mut() {
            *u = U::from_u64(u.to_u64() >> (U::BITS / 2) << (U::BITS / 2));
        }
        let mut rebuilt = D::splat(0u64);
        for k in U::BITS / 2..U::BITS {
            set_plane::<U, D>(rebuilt.as_mut(), k, naive_plane(top.as_ref(), k));
        }
        let mut back = D::splat(U::default());
        from_planes::<U, D>(&mut rebuilt, U::BITS / 2, |i, u| back.as_mut()[i] = u);
        assert_eq!(back.as_ref(), top.as_ref());
    }

    #[test]
    fn transpose_gives_zfp_planes_for_every_shape_and_width() {
        let mut seed = 0x1234_5678_9abc_def1;
        for _ in 0..20 {
            check_planes::<u32, D1>(&mut seed);
            check_planes::<u32, D2>(&mut seed);
            check_planes::<u32, D3>(&mut seed);
            check_planes::<u64, D1>(&mut seed);
            check_planes::<u64, D2>(&mut seed);
            check_planes::<u64, D3>(&mut seed);
        }
    }

    /// zfp's bit-serial encoder, transcribed literally, as the reference for the
    /// run-based one.
    fn reference_encode(out: &mut [bool; 4096], maxbits: u32, maxprec: u32, c: &[u32]) -> u32 {
        let size = c.len() as u32;
        let mut pos = 0usize;
        let mut put = |b: bool| {
            out[pos] = b;
            pos += 1;
            b
        };
        let mut bits = maxbits;
        let mut n = 0u32;
        let mut k = 32u32;
        let kmin = 32u32.saturating_sub(maxprec);
        while bits > 0 && k > kmin {
            k -= 1;
            let mut x = naive_plane(c, k);
            let m = n.min(bits);
            bits -= m;
            for _ in 0..m {
                put(x & 1 == 1);
                x >>= 1;
            }
            while bits > 0 && n < size {
                bits -= 1;
                if put(x != 0) {
                    while bits > 0 && n < size - 1 {
                        bits -= 1;
                        if put(x & 1 == 1) {
                            break;
                        }
                        x >>= 1;
                        n += 1;
                    }
                    x >>= 1;
                    n += 1;
                } else {
                    break;
                }
            }
        }
        maxbits - bits
    }

    fn check_coder<D: Dims>(seed: &mut u64, maxbits: u32, maxprec: u32) {
        let mut coef = D::splat(0u32);
        let shift = (rng(seed) % 32) as u32;
        for u in coef.as_mut() {
            // Sparse high planes, dense low ones, like real blocks.
            *u = (rng(seed) as u32) >> shift >> (rng(seed) % 8);
        }
        let mut want = [false; 4096];
        let nbits = reference_encode(&mut want, maxbits, maxprec, coef.as_ref());
        let mut words = [0u64; 64];
        let mut w = BitWriter::new(&mut words[..], 3);
        let c = coef.as_ref();
        let got_bits = encode_ints::<u32, D, _>(&mut w, maxbits, maxprec, |i| c[i]);
        w.flush();
        assert_eq!(got_bits, nbits);
        let mut r = BitReader::new(&words, 3);
        for (i, &b) in want[..nbits as usize].iter().enumerate() {
            assert_eq!(r.read_bit(), b, "bit {i} of {nbits} (maxbits {maxbits})");
        }
        let mut r = BitReader::new(&words, 3);
        let mut back = D::splat(0u32);
        let read = decode_ints::<u32, D, u64>(&mut r, maxbits, maxprec, |i, u| back.as_mut()[i] = u);
        assert_eq!(read, nbits);
        let mut r = BitReader::new(&words, 3);
        assert_eq!(skip_ints::<u32, D, u64>(&mut r, maxbits, maxprec), nbits);
        assert_eq!(r.position(), 3 + nbits as usize);
        if nbits < maxbits && maxprec >= 32 {
            // Nothing was cut off: the coefficients come back exactly.
            assert_eq!(back.as_ref(), coef.as_ref());
        }
    }

    #[test]
    fn run_coder_matches_bit_serial_reference_under_every_budget() {
        let mut seed = 0xdead_beef_cafe_f00d;
        for maxbits in (1..700).step_by(7).chain([2200, 4000]) {
            for maxprec in [64, 32, 20, 5, 1] {
                check_coder::<D1>(&mut seed, maxbits.min(200), maxprec);
                check_coder::<D2>(&mut seed, maxbits.min(700), maxprec);
                check_coder::<D3>(&mut seed, maxbits, maxprec);
            }
        }
    }
}
