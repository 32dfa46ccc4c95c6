//! The SZx block loops compiled twice: for the baseline x86-64 target and for AVX2 (with
//! FMA and BMI), picked at run time. The block bodies are `#[inline(always)]`, so each
//! copy inlines them with its own instruction set: their fixed-size loops over groups
//! then run 8 f32 lanes wide instead of 4.

/// Defines `fn $name<T: Element>(args) -> ret` running `$body` (an `#[inline(always)]`
/// function with the same signature) in its AVX2 copy when the CPU has AVX2, FMA, BMI1,
/// BMI2 and LZCNT, else in the baseline one.
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $body:path;) => {
        $(#[$doc])*
        fn $name<T: crate::Element>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                fn avx2<T: crate::Element>($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
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
