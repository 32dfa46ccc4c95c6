//! The SZx block loops compiled three times: for the baseline x86-64 target, for AVX2
//! (with FMA and BMI) and for AVX-512 (F, BW, VL, DQ, CD and VBMI), the best the CPU has
//! picked at run time. The block bodies are `#[inline(always)]`, so each copy inlines them with its
//! own instruction set: their fixed-size loops over groups of 64 values then run 8 or 16
//! f32 lanes wide instead of 4. The results are the same bytes whichever copy runs
//! (integer and IEEE operations only, no contraction into FMA).

use codec_kernels::szx::coding::GROUP;
use codec_kernels::szx::group_ops::{Counts, GroupOps};

/// Defines `fn $name<T: Element>(args) -> ret` running `$body` (an `#[inline(always)]`
/// function with the same signature) in its AVX-512 or AVX2 copy when the CPU has those
/// features, else in the baseline one (`fn $name<T: Bound>(args)` for another bound).
/// With `= $body, with ops`, `$body` takes one argument more, the coders'
/// [`GroupOps`]: [`VbmiOps`] in the AVX-512 copy, [`Avx2Ops`] in the AVX2 one, else the
/// portable ones. Each copy needs a type of its own: the decoder's per-group closure is
/// too large to inline where two copies call the same instance, and an instance shared
/// with the baseline copy runs, outlined, without AVX2 (2026-11-27, an AVX2 EPYC
/// decoding rtm at 1e-3 in a loop, medians of 5: 4.2 GB/s sharing the portable type,
/// 6.5 with a type of its own, 8.2 with [`Avx2Ops`]' shuffles).
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        $crate::szx::isa::multiversion! { $(#[$doc])* fn $name<T: crate::Element>($($arg: $ty),*) -> $ret = $body; }
    };
    ($(#[$doc:meta])* fn $name:ident<T: $bound:path>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        $crate::szx::isa::multiversion! { @copies $(#[$doc])* fn $name<T: $bound>($($arg: $ty),*) -> $ret = $body; [] [] [] }
    };
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path, with ops;) => {
        $crate::szx::isa::multiversion! {
            @copies $(#[$doc])* fn $name<T: crate::Element>($($arg: $ty),*) -> $ret = $body;
            [codec_kernels::szx::group_ops::ScalarOps]
            [$crate::szx::isa::Avx2Ops::new($crate::szx::isa::fast_bit_deposits())]
            [$crate::szx::isa::VbmiOps::new()]
        }
    };
    (@copies $(#[$doc:meta])* fn $name:ident<T: $bound:path>($($arg:ident: $ty:ty),*) -> $ret:ty = $body:path;
        [$($base:expr)?] [$($a2:expr)?] [$($a5:expr)?]) => {
        $(#[$doc])*
        fn $name<T: $bound>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                fn avx2<T: $bound>($($arg: $ty),*) -> $ret {
                    $body($($arg,)* $($a2)?)
                }
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx512vbmi")]
                fn avx512<T: $bound>($($arg: $ty),*) -> $ret {
                    $body($($arg,)* $($a5)?)
                }
                if $crate::szx::isa::has_avx512() {
                    // SAFETY: the CPU has every feature `avx512` is compiled for.
                    return unsafe { avx512($($arg),*) };
                }
                if $crate::szx::isa::has_avx2() {
                    // SAFETY: the CPU has every feature `avx2` is compiled for.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg,)* $($base)?)
        }
    };
}
pub(crate) use multiversion;

/// How far ahead of the values being read their input is prefetched (the encoder's
/// block passes, the value-range scan): four blocks of f32 at the default size. The
/// hardware prefetcher alone left the block statistics waiting for memory: on a Xeon
/// (2026-11-28; one thread, medians of 9, interleaved) prefetching 1 to 4 KiB ahead in
/// the one-thread fused pass compressed `rtm` and `seaice` at 1e-3 10% to 21% faster,
/// `smooth3d` (bound by its coding, not by memory) unchanged.
pub(crate) const PREFETCH_AHEAD_BYTES: usize = 2048;

/// Asks the caches for `len` values of `xs` [`PREFETCH_AHEAD_BYTES`] past `at` (as far
/// as `xs` goes); no effect on other processors.
#[inline(always)]
pub(crate) fn prefetch_ahead<T>(xs: &[T], at: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let from = (at + PREFETCH_AHEAD_BYTES / size_of::<T>()).min(xs.len());
        let ahead = &xs[from..(from + len).min(xs.len())];
        let start = ahead.as_ptr().cast::<i8>();
        for line in (0..size_of_val(ahead)).step_by(64) {
            // SAFETY: SSE is part of x86-64; a prefetch reads nothing into the program
            // and cannot fault, and the address is inside `xs`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(line)) };
        }
    }
}

/// Environment variable: the most the multiversioned loops may use, `avx512`, `avx2` or
/// `baseline` (x86-64's SSE2), or `auto` (the default: the best the CPU has). The CPU's
/// features still cap it. Every copy writes the same bytes; this one picks the copy, to
/// measure or check the others on a machine that would not run them. Read once per
/// process; another value is reported on stderr and read as `auto`.
pub const ENV_ISA: &str = "CCOLL_ISA";

/// The copies of the multiversioned loops, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// The default target's code (SSE2 on x86-64), and the only copy elsewhere.
    Baseline,
    Avx2,
    Avx512,
}

impl Isa {
    /// Its name as [`ENV_ISA`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The ceiling [`ENV_ISA`]'s value (`None`: unset) asks for.
    fn ceiling(value: Option<&str>) -> Result<Isa, String> {
        match value.map(str::trim) {
            None | Some("" | "auto") => Ok(Isa::Avx512),
            Some(v) => v.parse().map_err(|_| format!("{ENV_ISA}={v:?}: expected auto, avx512, avx2 or baseline")),
        }
    }
}

impl core::str::FromStr for Isa {
    type Err = ();

    /// The copy of that [`Isa::name`].
    fn from_str(s: &str) -> Result<Isa, ()> {
        [Isa::Baseline, Isa::Avx2, Isa::Avx512].into_iter().find(|i| i.name() == s).ok_or(())
    }
}

/// The copy the multiversioned loops run in this process: the best the CPU has, at most
/// what [`ENV_ISA`] allows.
pub fn active() -> Isa {
    if has_avx512() {
        Isa::Avx512
    } else if has_avx2() {
        Isa::Avx2
    } else {
        Isa::Baseline
    }
}

/// [`ENV_ISA`]'s ceiling, read once.
fn allowed() -> Isa {
    static ALLOWED: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| {
        Isa::ceiling(std::env::var(ENV_ISA).ok().as_deref()).unwrap_or_else(|e| {
            eprintln!("codec-host: {e}; running auto");
            Isa::Avx512
        })
    })
}

/// True if the AVX2 copies run: the CPU has them and [`ENV_ISA`] allows them.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    allowed() >= Isa::Avx2 && cpu_has_avx2()
}

/// True if the AVX-512 copies run: the CPU has them and [`ENV_ISA`] allows them.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx512() -> bool {
    allowed() >= Isa::Avx512 && cpu_has_avx512()
}

/// No bit deposits but on x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub fn fast_bit_deposits() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx2() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx512() -> bool {
    false
}

/// True if the CPU has what the AVX2 copies are compiled for (checked once, then cached
/// by std).
#[cfg(target_arch = "x86_64")]
#[inline]
fn cpu_has_avx2() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("fma") && has!("bmi1") && has!("bmi2") && has!("lzcnt") && has!("popcnt")
}

/// True if the CPU has what the AVX-512 copies are compiled for (F, BW, VL, DQ, CD and
/// VBMI, on top of the AVX2 set; a CPU with AVX-512 but without VBMI runs the AVX2
/// copies).
#[cfg(target_arch = "x86_64")]
#[inline]
fn cpu_has_avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    cpu_has_avx2() && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") && has!("avx512cd") && has!("avx512vbmi")
}

/// [`GroupOps`] in AVX2: a pick is, per 32 values, four in-lane byte shuffles
/// (`vpshufb`), one per 16-byte quarter of the group, merged; a compaction is one
/// shuffle per eight bytes ([`compact_by_shuffles`]); packing and unpacking are BMI2
/// bit extracts and deposits where those are fast ([`fast_bit_deposits`]), else, like
/// the running counts, the portable code compiled for AVX2. As with [`VbmiOps`], a
/// value exists only where the CPU has the instructions.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2Ops {
    deposits: bool,
}

#[cfg(target_arch = "x86_64")]
impl Avx2Ops {
    /// `deposits`: pack and unpack by bit extracts and deposits.
    #[target_feature(enable = "avx2,bmi2")]
    pub(crate) fn new(deposits: bool) -> Self {
        Avx2Ops { deposits }
    }
}

/// Whether this CPU's BMI2 bit extract and deposit (`pext`, `pdep`) are fast: not on
/// AMD's (and Hygon's) processors before Zen 3 (family 0x19), which run them in
/// microcode, one step per mask bit: 37 to 148 ns each for 8 to 56 mask bits on a Zen
/// 1 EPYC (2026-12-02), where one cycle would be 0.4 ns. Read once. The AVX2 copy packs
/// by them only where they are fast.
#[cfg(target_arch = "x86_64")]
pub fn fast_bit_deposits() -> bool {
    static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        use std::arch::x86_64::__cpuid;
        let (vendor, signature) = (__cpuid(0), __cpuid(1).eax);
        let name = [vendor.ebx, vendor.edx, vendor.ecx].map(u32::to_le_bytes).concat();
        deposits_fast_on(&name, signature)
    })
}

/// [`fast_bit_deposits`] for the CPUID vendor string `vendor` and signature (leaf 1's
/// EAX): its family is the base family, plus the extended family where the base is 0xf.
#[cfg(target_arch = "x86_64")]
fn deposits_fast_on(vendor: &[u8], signature: u32) -> bool {
    let base = signature >> 8 & 0xf;
    let family = base + if base == 0xf { signature >> 20 & 0xff } else { 0 };
    !(matches!(vendor, b"AuthenticAMD" | b"HygonGenuine") && family < 0x19)
}

#[cfg(target_arch = "x86_64")]
impl GroupOps for Avx2Ops {
    #[inline(always)]
    fn pick(self, src: &[u8; GROUP], prev: u8, counts: &Counts) -> [u8; GROUP] {
        use std::arch::x86_64::*;
        let mut out = [0u8; GROUP];
        // SAFETY: `self` exists, so the CPU has AVX2 (`new`); the loads read the 64 bytes
        // of `src` and of `counts`, the stores write the 64 of `out`.
        unsafe {
            let quarter = |k: usize| _mm256_broadcastsi128_si256(_mm_loadu_si128(src.as_ptr().add(16 * k).cast::<__m128i>()));
            let quarters = [quarter(0), quarter(1), quarter(2), quarter(3)];
            for half in 0..2 {
                // Count k (0 to 64) picks `src[k - 1]`; 0 wraps to 255, which no quarter
                // holds: `prev` is blended in there.
                let at = _mm256_sub_epi8(_mm256_loadu_si256(counts.as_ptr().add(4 * half).cast::<__m256i>()), _mm256_set1_epi8(1));
                let mut picked = _mm256_setzero_si256();
                for (k, q) in quarters.iter().enumerate() {
                    // Positions 16k to 16k + 15 become 0x70 to 0x7f (the shuffle reads
                    // their low four bits), all others saturate at 0x80 or above (the
                    // shuffle gives 0).
                    let index = _mm256_adds_epu8(_mm256_sub_epi8(at, _mm256_set1_epi8(16 * k as i8)), _mm256_set1_epi8(0x70));
                    picked = _mm256_or_si256(picked, _mm256_shuffle_epi8(*q, index));
                }
                let none = _mm256_cmpeq_epi8(at, _mm256_set1_epi8(-1));
                let merged = _mm256_blendv_epi8(picked, _mm256_set1_epi8(prev as i8), none);
                _mm256_storeu_si256(out.as_mut_ptr().add(32 * half).cast::<__m256i>(), merged);
            }
        }
        out
    }

    #[inline(always)]
    fn unpack(self, src: &[u8; GROUP], r: u32) -> [u8; GROUP] {
        if !self.deposits {
            return codec_kernels::szx::group_ops::ScalarOps.unpack(src, r);
        }
        // SAFETY: `self` exists, so the CPU has BMI2 (`new`).
        unsafe { unpack_by_deposits(src, r) }
    }

    #[inline(always)]
    fn pack(self, src: &[u8; GROUP], r: u32) -> [u64; GROUP / 8] {
        if !self.deposits {
            return codec_kernels::szx::group_ops::ScalarOps.pack(src, r);
        }
        // SAFETY: as in `unpack`.
        unsafe { pack_by_extracts(src, r) }
    }

    #[inline(always)]
    fn at_most(self, lead: &[u8; GROUP], code: u8) -> u64 {
        use std::arch::x86_64::*;
        // SAFETY: `self` exists, so the CPU has AVX2 (`new`); the loads read the 64 bytes
        // of `lead`. Codes and `code` are small: a signed compare orders them.
        unsafe {
            let above = |half: usize| {
                let v = _mm256_loadu_si256(lead.as_ptr().add(32 * half).cast::<__m256i>());
                _mm256_movemask_epi8(_mm256_cmpgt_epi8(v, _mm256_set1_epi8(code as i8))) as u32 as u64
            };
            !(above(0) | above(1) << 32)
        }
    }

    #[inline(always)]
    fn compact(self, src: &[u8; GROUP], keep: u64) -> [u8; GROUP] {
        // SAFETY: `self` exists, so the CPU has AVX2, hence SSSE3.
        unsafe { compact_by_shuffles(src, keep) }
    }
}

/// The low `r` bits of each byte of a word.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn field_mask(r: u32) -> u64 {
    0x0101_0101_0101_0101 * ((1u64 << (r & 7)) - 1)
}

/// [`GroupOps::unpack`]: per eight fields, one bit deposit (`pdep`) of their `r` bytes
/// into the low bits of eight bytes.
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn unpack_by_deposits(src: &[u8; GROUP], r: u32) -> [u8; GROUP] {
    use std::arch::x86_64::_pdep_u64;
    let (mask, r) = (field_mask(r), (r & 7) as usize);
    let mut out = [0u8; GROUP];
    for (j, o) in out.chunks_exact_mut(8).enumerate() {
        // Eight fields start at byte `j * r`, at most 49: eight bytes are in `src`.
        let word = u64::from_le_bytes(core::array::from_fn(|i| src[(j * r + i) % GROUP]));
        // SAFETY: the caller's CPU has BMI2.
        o.copy_from_slice(&unsafe { _pdep_u64(word, mask) }.to_le_bytes());
    }
    out
}

/// [`GroupOps::pack`]: per eight fields, one bit extract (`pext`) of the low `r` bits
/// of their bytes.
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pack_by_extracts(src: &[u8; GROUP], r: u32) -> [u64; GROUP / 8] {
    use std::arch::x86_64::_pext_u64;
    let mask = field_mask(r);
    // SAFETY: the caller's CPU has BMI2.
    core::array::from_fn(|j| unsafe { _pext_u64(u64::from_le_bytes(core::array::from_fn(|i| src[8 * j + i])), mask) })
}

/// Per mask of eight bits, the byte shuffle that moves the bytes whose bit is set to the
/// front, in order, and zeros the others (index 0x80).
#[cfg(target_arch = "x86_64")]
const COMPACT: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let (mut shuffle, mut at, mut i) = (u64::MAX, 0, 0);
        while i < 8 {
            if m >> i & 1 == 1 {
                shuffle = shuffle & !(0xff << (8 * at)) | (i as u64) << (8 * at);
                at += 1;
            }
            i += 1;
        }
        t[m] = shuffle;
        m += 1;
    }
    t
};

/// [`GroupOps::compact`] by one byte shuffle per eight bytes, from a table of 256; each
/// piece is stored where the one before ends (its spare bytes zeros, which the next
/// piece overwrites), so only a population count links them (the portable loop
/// links every byte to the one before: 2026-11-27, an AVX2 EPYC compressing smooth3d
/// and rtm at 1e-3 in a loop, this made the compressor 7 to 45% faster).
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn compact_by_shuffles(src: &[u8; GROUP], keep: u64) -> [u8; GROUP] {
    use std::arch::x86_64::*;
    // Room for the last piece's spare bytes.
    let mut out = [0u8; GROUP + 8];
    let mut at = 0;
    for j in 0..GROUP / 8 {
        let m = (keep >> (8 * j)) as u8;
        // SAFETY: the load reads bytes 8j to 8j + 7 of `src`; `at` is at most 8j, so the
        // store writes within `out`.
        unsafe {
            let bytes = _mm_loadl_epi64(src.as_ptr().add(8 * j).cast::<__m128i>());
            let shuffle = _mm_cvtsi64_si128(COMPACT[m as usize] as i64);
            _mm_storel_epi64(out.as_mut_ptr().add(at).cast::<__m128i>(), _mm_shuffle_epi8(bytes, shuffle));
        }
        at += m.count_ones() as usize;
    }
    std::array::from_fn(|i| out[i])
}

/// [`GroupOps`] in AVX-512 VBMI: a pick is one two-table byte permute (`vpermi2b`),
/// an unpack a byte permute and a multishift (`vpermb`, `vpmultishiftqb`). A value exists
/// only where the CPU has them: [`VbmiOps::new`] can be called without `unsafe` only
/// from code compiled for AVX-512 VBMI.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct VbmiOps(());

#[cfg(target_arch = "x86_64")]
impl VbmiOps {
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    pub(crate) fn new() -> Self {
        VbmiOps(())
    }
}

/// Per field width `r`, the byte permute and the bit offsets that put field `8k + b` in
/// byte `b` of word `k`: the word takes the bytes from `k * r` on (eight fields are
/// `r` whole bytes), the field sits `b * r` bits into it.
#[cfg(target_arch = "x86_64")]
const UNPACK: [([u8; GROUP], [u8; GROUP]); 8] = {
    let mut t = [([0u8; GROUP], [0u8; GROUP]); 8];
    let mut r = 1;
    while r < 8 {
        let mut i = 0;
        while i < GROUP {
            let (k, b) = (i / 8, i % 8);
            t[r].0[i] = (k * r + b) as u8;
            t[r].1[i] = (b * r) as u8;
            i += 1;
        }
        r += 1;
    }
    t
};

#[cfg(target_arch = "x86_64")]
impl GroupOps for VbmiOps {
    #[inline(always)]
    fn running_count(self, lead: &[u8; GROUP], code: u8) -> Counts {
        use std::arch::x86_64::*;
        let mut out = [0u64; GROUP / 8];
        // SAFETY: as in `pick` (AVX-512 DQ comes with the copies that construct `self`,
        // see `has_avx512`); the load reads the 64 bytes of `lead`, the store writes
        // the 64 of `out`.
        unsafe {
            let ones = _mm512_set1_epi64(0x0101_0101_0101_0101);
            let hits = _mm512_maskz_mov_epi8(_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(lead.as_ptr().cast::<__m512i>()), _mm512_set1_epi8(code as i8)), _mm512_set1_epi8(1));
            // Counts within each word of eight (one multiplication), then the totals of
            // the words before it: a prefix sum over the eight words in three steps.
            let within = _mm512_mullo_epi64(hits, ones);
            let totals = _mm512_srli_epi64::<56>(within);
            let step = |v: __m512i, by: i64, keep: __mmask8| _mm512_add_epi64(v, _mm512_maskz_permutexvar_epi64(keep, _mm512_sub_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(by)), v));
            let inclusive = step(step(step(totals, 1, 0xfe), 2, 0xfc), 4, 0xf0);
            let before = _mm512_maskz_permutexvar_epi64(0xfe, _mm512_set_epi64(6, 5, 4, 3, 2, 1, 0, 0), inclusive);
            let counts = _mm512_add_epi64(within, _mm512_mullo_epi64(before, ones));
            _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), counts);
        }
        out
    }

    #[inline(always)]
    fn pick(self, src: &[u8; GROUP], prev: u8, counts: &Counts) -> [u8; GROUP] {
        use std::arch::x86_64::*;
        let mut out = [0u8; GROUP];
        let c = counts.map(|w| w as i64);
        // SAFETY: `self` exists, so the CPU has AVX-512 F, BW and VBMI (`new`); the load
        // reads the 64 bytes of `src`, the store writes the 64 of `out`.
        unsafe {
            let src = _mm512_loadu_si512(src.as_ptr().cast::<__m512i>());
            // Count k picks `src[k - 1]`; 0 wraps to 255, an entry of the second table,
            // all `prev`.
            let idx = _mm512_sub_epi8(_mm512_set_epi64(c[7], c[6], c[5], c[4], c[3], c[2], c[1], c[0]), _mm512_set1_epi8(1));
            let picked = _mm512_permutex2var_epi8(src, idx, _mm512_set1_epi8(prev as i8));
            _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), picked);
        }
        out
    }

    #[inline(always)]
    fn unpack(self, src: &[u8; GROUP], r: u32) -> [u8; GROUP] {
        use std::arch::x86_64::*;
        let (bytes, offsets) = &UNPACK[r as usize & 7];
        let mut out = [0u8; GROUP];
        // SAFETY: as in `pick`; the loads read the 64 bytes of `src`, `bytes` and
        // `offsets`, the store writes the 64 of `out`.
        unsafe {
            let words = _mm512_permutexvar_epi8(_mm512_loadu_si512(bytes.as_ptr().cast::<__m512i>()), _mm512_loadu_si512(src.as_ptr().cast::<__m512i>()));
            let fields = _mm512_multishift_epi64_epi8(_mm512_loadu_si512(offsets.as_ptr().cast::<__m512i>()), words);
            let masked = _mm512_and_si512(fields, _mm512_set1_epi8(((1u32 << r) - 1) as i8));
            _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), masked);
        }
        out
    }

    #[inline(always)]
    fn pack(self, src: &[u8; GROUP], r: u32) -> [u64; GROUP / 8] {
        // SAFETY: `self` exists, so the CPU has BMI2 (`new`).
        unsafe { pack_by_extracts(src, r) }
    }

    #[inline(always)]
    fn at_most(self, lead: &[u8; GROUP], code: u8) -> u64 {
        use std::arch::x86_64::*;
        // SAFETY: as in `pick`; the load reads the 64 bytes of `lead`.
        unsafe { _mm512_cmple_epu8_mask(_mm512_loadu_si512(lead.as_ptr().cast::<__m512i>()), _mm512_set1_epi8(code as i8)) }
    }

    #[inline(always)]
    fn compact(self, src: &[u8; GROUP], keep: u64) -> [u8; GROUP] {
        // SAFETY: `self` exists, so the CPU has AVX-512, hence SSSE3.
        unsafe { compact_by_shuffles(src, keep) }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use codec_kernels::szx::group_ops::ScalarOps;

    /// A fixed xorshift64 stream: the tests' random inputs, the same on every run.
    fn xorshift() -> impl FnMut() -> u64 {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    #[test]
    fn the_ceiling_is_read_from_its_name() {
        assert_eq!(Isa::ceiling(None), Ok(Isa::Avx512));
        assert_eq!(Isa::ceiling(Some(" auto ")), Ok(Isa::Avx512));
        assert_eq!(Isa::ceiling(Some("")), Ok(Isa::Avx512));
        for isa in [Isa::Baseline, Isa::Avx2, Isa::Avx512] {
            assert_eq!(Isa::ceiling(Some(isa.name())), Ok(isa));
        }
        let e = Isa::ceiling(Some("sse4")).unwrap_err();
        assert!(e.contains("CCOLL_ISA=\"sse4\"") && e.contains("baseline"), "{e}");
        // The copy that runs is never above what the CPU has.
        assert!(active() <= if cpu_has_avx512() { Isa::Avx512 } else if cpu_has_avx2() { Isa::Avx2 } else { Isa::Baseline });
    }

    /// Zen 1 and 2 (family 0x17) and Hygon's Zen 1 (0x18) run bit deposits in
    /// microcode; Zen 3 and 4 (0x19), Zen 5 (0x1a) and Intel's processors in hardware.
    /// The signatures as CPUID encodes a family and model.
    #[test]
    fn bit_deposits_are_slow_on_amd_before_zen_3() {
        let signature = |family: u32, model: u32| if family > 0xf { 0xf << 8 | (family - 0xf) << 20 } else { family << 8 } | (model & 0xf) << 4 | (model >> 4) << 16;
        assert!(!deposits_fast_on(b"AuthenticAMD", signature(0x17, 1)));
        assert!(!deposits_fast_on(b"AuthenticAMD", signature(0x17, 0x31)));
        assert!(!deposits_fast_on(b"HygonGenuine", signature(0x18, 0)));
        assert!(deposits_fast_on(b"AuthenticAMD", signature(0x19, 0x11)));
        assert!(deposits_fast_on(b"AuthenticAMD", signature(0x1a, 0x02)));
        assert!(deposits_fast_on(b"GenuineIntel", signature(6, 0x8f)));
    }

    /// The vector group steps the CPU has: AVX2's (with bit deposits, then without),
    /// then AVX-512 VBMI's.
    fn vector_ops() -> (Vec<Avx2Ops>, Option<VbmiOps>) {
        // SAFETY: each is made only where the CPU has its instructions.
        let avx2 = [true, false].into_iter().filter(|_| cpu_has_avx2()).map(|deposits| unsafe { Avx2Ops::new(deposits) }).collect();
        (avx2, unsafe { cpu_has_avx512().then(|| VbmiOps::new()) })
    }

    /// The vector group steps (AVX2's and AVX-512 VBMI's, where the CPU has them) give the
    /// portable ones' bytes, on random windows, previous bytes, running counts (0 to 64),
    /// field widths (0 to 7, packed and unpacked) and masks of bytes kept (all, none,
    /// sparse and dense).
    #[test]
    fn vector_ops_equal_the_portable_ones() {
        let (avx2, vbmi) = vector_ops();
        if avx2.is_empty() {
            eprintln!("this CPU has no AVX2: nothing to compare");
        }
        for ops in avx2 {
            ops_equal_the_portable_ones(ops);
        }
        if let Some(ops) = vbmi {
            ops_equal_the_portable_ones(ops);
        }
    }

    fn ops_equal_the_portable_ones(vector: impl GroupOps + std::fmt::Debug) {
        let mut next = xorshift();
        for round in 0..4000 {
            let src: [u8; GROUP] = std::array::from_fn(|_| next() as u8);
            let prev = next() as u8;
            // Running counts: each value's is its predecessor's or one more; every
            // fourth round all stored (64 at the end), or none.
            let mut k = 0u8;
            let steps: [u8; GROUP] = std::array::from_fn(|_| {
                k += match round % 4 {
                    0 => 1,
                    1 => 0,
                    _ => (next() & 1) as u8,
                };
                k
            });
            let counts: Counts = std::array::from_fn(|w| u64::from_le_bytes(std::array::from_fn(|i| steps[8 * w + i])));
            assert_eq!(vector.pick(&src, prev, &counts), ScalarOps.pick(&src, prev, &counts), "{vector:?}, round {round}");
            let lead: [u8; GROUP] = std::array::from_fn(|i| (src[i] >> (round % 7)) & 3);
            for code in 0..=4 {
                assert_eq!(vector.running_count(&lead, code), ScalarOps.running_count(&lead, code), "round {round}, code {code}");
                assert_eq!(vector.at_most(&lead, code), ScalarOps.at_most(&lead, code), "round {round}, code {code}");
            }
            for r in 0..8 {
                assert_eq!(vector.unpack(&src, r), ScalarOps.unpack(&src, r), "round {round}, r {r}");
                // Packing fields of r bits, and unpacking them back.
                let fields = src.map(|b| b & ((1u16 << r) - 1) as u8);
                let packed = vector.pack(&fields, r);
                assert_eq!(packed, ScalarOps.pack(&fields, r), "round {round}, r {r}");
                let mut bytes = [0u8; GROUP];
                for (j, w) in packed.iter().enumerate() {
                    for (i, b) in w.to_le_bytes().into_iter().enumerate().take(r as usize) {
                        bytes[j * r as usize + i] = b;
                    }
                }
                assert_eq!(vector.unpack(&bytes, r), fields, "round {round}, r {r}");
            }
            let keep = match round % 4 {
                0 => u64::MAX,
                1 => 0,
                2 => next() & next(),
                _ => next() | next(),
            };
            assert_eq!(vector.compact(&src, keep), ScalarOps.compact(&src, keep), "round {round}, keep {keep:#x}");
        }
    }

    /// Whole blocks planned and written with the vector steps (each set the CPU has)
    /// give the portable encoder's plan and bytes; decoded with them, read with garbage
    /// after the payload, the portable decoder's values and verdicts on the payload
    /// alone: random blocks of every coding and length, clean and with flipped bits.
    #[test]
    fn vector_blocks_code_as_the_portable_coders() {
        let (avx2, vbmi) = vector_ops();
        for ops in avx2 {
            blocks_code_as_the_portable_coders(ops);
        }
        if let Some(ops) = vbmi {
            blocks_code_as_the_portable_coders(ops);
        }
    }

    fn blocks_code_as_the_portable_coders(vector: impl GroupOps + std::fmt::Debug) {
        use codec_kernels::szx::decode::{decode_block, decode_block_padded};
        use codec_kernels::szx::{encode_block, max_payload_len, plan_block, plan_encode_block, Tolerance};
        let mut next = xorshift();
        let mut fixed_point = 0;
        for round in 0..3000 {
            let n = [1usize, 5, 63, 64, 65, 128, 129, 256][round % 8];
            let level = (next() % 8) as f32 * 0.125;
            let x: Vec<f32> = (0..n)
                .map(|i| match (round / 8 + i / 16) % 4 {
                    0 => 0.0,
                    1 => level,
                    2 => ((next() % 2001) as f32 - 1000.0) * 1e-3,
                    _ => (i as f32 * 0.05).sin() + level,
                })
                .collect();
            let e = [0.0f32, 1e-4, 1e-3, 1e-2, 0.3][(round / 3) % 5];
            let plan = plan_block(&x, &Tolerance::new(e));
            let mut payload = vec![0u8; plan.size as usize];
            assert!(encode_block(&x, &plan, &mut payload));
            let mut fused = vec![0u8; max_payload_len::<f32>(n)];
            assert_eq!(plan_encode_block(&x, &Tolerance::new(e), &mut fused, vector), Some(plan), "{vector:?}, round {round}");
            assert_eq!(fused[..payload.len()], payload[..], "{vector:?}, round {round}");
            fixed_point += (plan.state & 0xc0 == 0xc0) as usize;
            if round % 4 == 1 && !payload.is_empty() {
                let at = next() as usize % payload.len();
                payload[at] ^= 1 << (next() % 8);
            }
            let mut want = vec![9f32; n];
            let verdict = decode_block(plan.state, &payload, &mut want);
            let mut bytes = payload.clone();
            bytes.extend((0..GROUP + 8).map(|_| next() as u8));
            let mut got = vec![9f32; n];
            assert_eq!(decode_block_padded(plan.state, &bytes, payload.len(), &mut got, vector), verdict, "{vector:?}, round {round}");
            if verdict.is_ok() {
                let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{vector:?}, round {round}");
            }
        }
        assert!(fixed_point > 1000, "{fixed_point} fixed-point blocks");
    }
}
