//! The SZx block loops compiled three times: for the baseline x86-64 target, for AVX2
//! (with FMA and BMI) and for AVX-512 (F, BW, VL, DQ, CD and VBMI), the best the CPU has
//! picked at run time. The block bodies are `#[inline(always)]`, so each copy inlines them with its
//! own instruction set: their fixed-size loops over groups of 64 values then run 8 or 16
//! f32 lanes wide instead of 4. The results are the same bytes whichever copy runs
//! (integer and IEEE operations only, no contraction into FMA).

use codec_kernels::szx::decode::{ByteLookup, LOOKUP_TABLE};
use codec_kernels::szx::coding::GROUP;

/// Defines `fn $name<T: Element>(args) -> ret` running `$body` (an `#[inline(always)]`
/// function with the same signature) in its AVX-512 or AVX2 copy when the CPU has those
/// features, else in the baseline one (`fn $name<T: Bound>(args)` for another bound).
/// With `= $body, with lookup`, `$body` takes one argument more, the decoder's
/// [`ByteLookup`]: [`VbmiLookup`] in the AVX-512 copy, else the scalar one.
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        multiversion! { $(#[$doc])* fn $name<T: crate::Element>($($arg: $ty),*) -> $ret = $body; }
    };
    ($(#[$doc:meta])* fn $name:ident<T: $bound:path>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        multiversion! { @copies $(#[$doc])* fn $name<T: $bound>($($arg: $ty),*) -> $ret = $body; [] [] [] }
    };
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path, with lookup;) => {
        multiversion! {
            @copies $(#[$doc])* fn $name<T: crate::Element>($($arg: $ty),*) -> $ret = $body;
            [codec_kernels::szx::decode::ScalarLookup]
            [codec_kernels::szx::decode::ScalarLookup]
            [$crate::szx::isa::VbmiLookup::new()]
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
pub(super) use multiversion;

/// True if the CPU runs the AVX2 copies (checked once, then cached by std).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("fma") && has!("bmi1") && has!("bmi2") && has!("lzcnt") && has!("popcnt")
}

/// True if the CPU runs the AVX-512 copies (F, BW, VL, DQ, CD and VBMI, on top of the
/// AVX2 set; a CPU with AVX-512 but without VBMI runs the AVX2 copies).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has_avx2() && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") && has!("avx512cd") && has!("avx512vbmi")
}

/// [`ByteLookup`] as one AVX-512 VBMI two-table byte permute (`vpermi2b`) per group.
/// A value exists only where the CPU has the instruction: [`VbmiLookup::new`] can be
/// called without `unsafe` only from code compiled for AVX-512 VBMI.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct VbmiLookup(());

#[cfg(target_arch = "x86_64")]
impl VbmiLookup {
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(crate) fn new() -> Self {
        VbmiLookup(())
    }
}

#[cfg(target_arch = "x86_64")]
impl ByteLookup for VbmiLookup {
    #[inline(always)]
    fn lookup(self, table: &[u8; LOOKUP_TABLE], index: &[u8; GROUP]) -> [u8; GROUP] {
        use std::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_permutex2var_epi8, _mm512_storeu_si512};
        const _: () = assert!(GROUP == 64 && LOOKUP_TABLE == 128, "one permute of two 64-byte tables");
        let mut out = [0u8; GROUP];
        // SAFETY: `self` exists, so the CPU has AVX-512 F, BW and VBMI (`new`); the loads
        // read the 128 bytes of `table` and the 64 of `index`, the store writes the 64 of
        // `out` (unaligned accesses, all within those arrays).
        unsafe {
            let lo = _mm512_loadu_si512(table.as_ptr().cast::<__m512i>());
            let hi = _mm512_loadu_si512(table[GROUP..].as_ptr().cast::<__m512i>());
            let idx = _mm512_loadu_si512(index.as_ptr().cast::<__m512i>());
            _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), _mm512_permutex2var_epi8(lo, idx, hi));
        }
        out
    }
}
