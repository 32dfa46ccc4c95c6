//! The SZx block loops compiled three times: for the baseline x86-64 target, for AVX2
//! (with FMA and BMI) and for AVX-512 (F, BW, VL, DQ, CD), the best the CPU has picked at
//! run time. The block bodies are `#[inline(always)]`, so each copy inlines them with its
//! own instruction set: their fixed-size loops over groups of 64 values then run 8 or 16
//! f32 lanes wide instead of 4. The results are the same bytes whichever copy runs
//! (integer and IEEE operations only, no contraction into FMA).

/// Defines `fn $name<T: Element>(args) -> ret` running `$body` (an `#[inline(always)]`
/// function with the same signature) in its AVX-512 or AVX2 copy when the CPU has those
/// features, else in the baseline one (`fn $name<T: Bound>(args)` for another bound).
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        multiversion! { $(#[$doc])* fn $name<T: crate::Element>($($arg: $ty),*) -> $ret = $body; }
    };
    ($(#[$doc:meta])* fn $name:ident<T: $bound:path>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        $(#[$doc])*
        fn $name<T: $bound>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                fn avx2<T: $bound>($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512cd")]
                fn avx512<T: $bound>($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
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
            $body($($arg),*)
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

/// True if the CPU runs the AVX-512 copies (F, BW, VL, DQ, CD, on top of the AVX2 set).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has_avx2() && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") && has!("avx512cd")
}
