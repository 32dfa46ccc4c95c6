//! The kernel-definition machinery: one macro turns a kernel's name, typed parameter
//! list and body into everything both sides need.
//!
//! For each kernel, `define_kernels!` yields
//! - a unit type implementing [`Kernel`] (its entry-point name and parameter struct),
//! - the `#[repr(C)]` parameter struct of its family (the same fields in the same order
//!   as the entry point, so its bytes are the packed CUDA parameter buffer; several
//!   kernels of one family share it),
//! - on nvptx64 only, the `#[no_mangle] extern "gpu-kernel"` entry point running the body,
//! - an impl of the family's selection trait, so that host code picks a kernel by type
//!   (`<f32 as ZfpRateEncode<D2>>::K`) instead of building its name,
//!
//! and, over all kernels, [`ENTRY_POINTS`](crate::kernels::ENTRY_POINTS) and
//! [`LAYOUTS`](crate::kernels::LAYOUTS). The definitions live in `crate::kernels`.

use core::marker::PhantomData;

/// A GPU kernel: its entry-point name and the struct whose bytes are its parameters.
pub trait Kernel {
    /// The `.entry` name in the PTX module.
    const NAME: &'static str;
    /// The parameters, `#[repr(C)]` in entry-point order.
    type Params: Copy;
    /// Name, offset and size of every field of [`Params`](Self::Params), in order.
    const FIELDS: &'static [Field];
}

/// One field of a parameter struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// A kernel's name and parameter layout, for checks against the PTX `.param` lists.
#[derive(Clone, Copy, Debug)]
pub struct KernelLayout {
    pub name: &'static str,
    /// `size_of` the parameter struct: the packed buffer's length.
    pub size: usize,
    pub fields: &'static [Field],
}

impl KernelLayout {
    /// The layout of `K`.
    pub const fn of<K: Kernel>() -> Self {
        KernelLayout { name: K::NAME, size: core::mem::size_of::<K::Params>(), fields: K::FIELDS }
    }
}

/// A device address of `T` values, as a kernel parameter: 8 bytes on every target (the
/// host fills it from its driver's pointer, the entry point sees a `*mut T`).
#[repr(transparent)]
pub struct DevicePtr<T> {
    addr: u64,
    _elem: PhantomData<fn() -> T>,
}

impl<T> DevicePtr<T> {
    /// The pointer at device address `addr` (0: null, an empty buffer).
    pub const fn from_addr(addr: u64) -> Self {
        DevicePtr { addr, _elem: PhantomData }
    }

    /// The device address.
    pub const fn addr(self) -> u64 {
        self.addr
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> core::fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevicePtr({:#x})", self.addr)
    }
}

/// How a parameter field's type appears in the entry point's signature.
pub trait KernelArg: Copy {
    /// The entry point's parameter type (same size and alignment).
    type Raw;
}

impl<T> KernelArg for DevicePtr<T> {
    type Raw = *mut T;
}

macro_rules! plain_args {
    ($($t:ty),*) => {$(
        impl KernelArg for $t {
            type Raw = $t;
        }
    )*};
}
plain_args!(u32, i32, u64, usize, f64);

/// Defines kernels, family by family:
///
/// ```text
/// /// docs of the parameter struct
/// family ParamsStruct[STRUCT_GENERICS] (field: Type, ...)
/// generics [ALIASES] select [SelectionTrait<..> for ALIAS]   // or select []
/// body { ... }                       // uses the fields as entry-point arguments and the aliases
/// kernels {
///     KernelType = entry_name [TYPES for the ALIASES, in order];
/// }
/// ```
///
/// Each kernel gets its own scope in which every alias names its type, so the body,
/// the parameter struct's arguments and the selection impl are written once per family.
macro_rules! define_kernels {
    ($(
        $(#[doc = $doc:literal])*
        family $Params:ident $sg:tt $fields:tt
        generics $gens:tt select $sel:tt
        body $body:block
        kernels { $($K:ident = $name:ident $keys:tt;)* }
    )*) => {
        $(
            define_kernels!(@params [$(#[doc = $doc])*] $Params $sg $fields);
            $(define_kernels!(@kernel $K $name $Params $sg $fields $gens $keys $sel $body);)*
        )*

        /// Every entry point of the PTX module, from the definitions (build-ptx and the
        /// CUDA backend check the module against it).
        pub const ENTRY_POINTS: &[&str] = &[$($(stringify!($name),)*)*];

        /// Every kernel's parameter layout, in [`ENTRY_POINTS`] order.
        pub const LAYOUTS: &[$crate::launch::KernelLayout] = &[$($($crate::launch::KernelLayout::of::<$K>(),)*)*];
    };
    (@params [$($attr:tt)*] $Params:ident [$($SG:ident),*] ($($arg:ident : $aty:ty),* $(,)?)) => {
        $($attr)*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $Params<$($SG),*> {
            $(pub $arg: $aty,)*
        }
    };
    (@kernel $K:ident $name:ident $Params:ident [$($SG:ident),*] ($($arg:ident : $aty:ty),* $(,)?)
        [$($G:ident),*] [$($key:ty),*] [$($sel:tt)*] $body:block) => {
        #[doc = concat!("The `", stringify!($name), "` kernel.")]
        pub struct $K;

        // Not every part uses every alias.
        #[allow(dead_code)]
        const _: () = {
            $(type $G = $key;)*
            type ThisParams = $Params<$($SG),*>;

            impl $crate::launch::Kernel for $K {
                const NAME: &'static str = stringify!($name);
                type Params = ThisParams;
                const FIELDS: &'static [$crate::launch::Field] = &[$($crate::launch::Field {
                    name: stringify!($arg),
                    offset: core::mem::offset_of!(ThisParams, $arg),
                    size: core::mem::size_of::<$aty>(),
                },)*];
            }

            define_kernels!(@select $K [$($sel)*]);

            // The lint reads the parameter types before normalising them; every
            // `KernelArg::Raw` is a primitive or a raw pointer.
            #[cfg(target_arch = "nvptx64")]
            #[allow(unknown_lints, improper_gpu_kernel_arg)]
            #[no_mangle]
            pub unsafe extern "gpu-kernel" fn $name($($arg: <$aty as $crate::launch::KernelArg>::Raw),*) $body
        };
    };
    (@select $K:ident []) => {};
    (@select $K:ident [$($sel:tt)+]) => {
        impl $($sel)+ {
            type K = $K;
        }
    };
}
