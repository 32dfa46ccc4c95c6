//! Output slices that many grid positions write at distinct indices.
//!
//! A body is called once per grid position, concurrently on the GPU and on the CPU
//! executor's pool, so it cannot hold a `&mut [T]` of the whole output. [`SharedOut`]
//! views the output as atomic cells and stores with `Relaxed` ordering: safe Rust, the
//! same code on both targets, and on the GPU a plain global store with relaxed
//! semantics (`st.relaxed`), since grid-stride loops never write one index twice.

use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

/// A plain value stored through an atomic cell of the same size.
pub trait Cell: Copy {
    /// The atomic type with the same size and alignment.
    type Atomic: Sync;
    /// Stores `v` into `cell`.
    fn store(cell: &Self::Atomic, v: Self);
    /// Loads the value of `cell`.
    fn load(cell: &Self::Atomic) -> Self;
}

macro_rules! cell_via_bits {
    ($t:ty, $atomic:ty, $to:expr, $from:expr) => {
        impl Cell for $t {
            type Atomic = $atomic;
            #[inline(always)]
            fn store(cell: &$atomic, v: $t) {
                cell.store($to(v), Ordering::Relaxed)
            }
            #[inline(always)]
            fn load(cell: &$atomic) -> $t {
                $from(cell.load(Ordering::Relaxed))
            }
        }
        // The cast in `SharedOut::new` relies on identical layout.
        const _: () = assert!(
            core::mem::size_of::<$t>() == core::mem::size_of::<$atomic>()
                && core::mem::align_of::<$t>() == core::mem::align_of::<$atomic>()
        );
    };
}

cell_via_bits!(u16, AtomicU16, |v| v, |v| v);
cell_via_bits!(u32, AtomicU32, |v| v, |v| v);
cell_via_bits!(u64, AtomicU64, |v| v, |v| v);
cell_via_bits!(f32, AtomicU32, f32::to_bits, f32::from_bits);
cell_via_bits!(f64, AtomicU64, f64::to_bits, f64::from_bits);

/// A shared view of an output slice: any grid position may store into any index.
pub struct SharedOut<'a, T: Cell> {
    cells: &'a [T::Atomic],
}

impl<'a, T: Cell> SharedOut<'a, T> {
    /// Views `slice` as shared cells for the duration of the borrow.
    #[inline]
    pub fn new(slice: &'a mut [T]) -> Self {
        // SAFETY: `T` and `T::Atomic` have the same size and alignment (asserted per
        // type above), and the exclusive borrow guarantees no other access meanwhile.
        let cells = unsafe { core::slice::from_raw_parts(slice.as_mut_ptr() as *const T::Atomic, slice.len()) };
        SharedOut { cells }
    }

    /// Views `len` values at `ptr` (GPU entry points, which receive raw device pointers).
    ///
    /// # Safety
    /// `ptr` must be null (then `len` is ignored and the view is empty) or valid for
    /// reads and writes of `len` values for `'a`, accessed only through this view.
    #[inline]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        if ptr.is_null() || len == 0 {
            return SharedOut { cells: &[] };
        }
        SharedOut { cells: core::slice::from_raw_parts(ptr as *const T::Atomic, len) }
    }

    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// True if the view holds no values.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Stores `v` at `index`; an index past the end is ignored (bodies bound their loops
    /// by `len()`, this keeps the store free of a panic path).
    #[inline(always)]
    pub fn set(&self, index: usize, v: T) {
        if let Some(c) = self.cells.get(index) {
            T::store(c, v);
        }
    }

    /// The value at `index`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<T> {
        self.cells.get(index).map(T::load)
    }

    /// The part of the view in `range` (clipped to the view), e.g. one CPU tile.
    #[inline(always)]
    pub fn slice(&self, range: core::ops::Range<usize>) -> SharedOut<'a, T> {
        let end = range.end.min(self.cells.len());
        SharedOut { cells: self.cells.get(range.start.min(end)..end).unwrap_or(&[]) }
    }

    /// The cells themselves (for sinks such as the bit writer's `&[AtomicU64]`).
    #[inline(always)]
    pub fn cells(&self) -> &'a [T::Atomic] {
        self.cells
    }
}

/// Views `len` values at `ptr` as an input slice; a null pointer gives an empty slice
/// (cust hands out null for empty device buffers).
///
/// # Safety
/// `ptr` must be null or valid for reads of `len` values for `'a`, not written meanwhile.
#[inline(always)]
pub unsafe fn input<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        core::slice::from_raw_parts(ptr, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_land_in_the_borrowed_slice() {
        let mut v = [0f64; 4];
        {
            let out = SharedOut::new(&mut v[..]);
            out.set(1, -2.5);
            out.set(3, f64::INFINITY);
            out.set(9, 1.0); // ignored
            assert_eq!(out.get(1), Some(-2.5));
            assert_eq!(out.get(4), None);
            assert_eq!(out.len(), 4);
            let tail = out.slice(2..10);
            assert_eq!(tail.len(), 2);
            tail.set(1, 7.0);
            assert!(out.slice(5..9).is_empty());
        }
        assert_eq!(v, [0.0, -2.5, 0.0, 7.0]);
    }

    #[test]
    fn nan_payloads_survive_the_round_trip() {
        let nan = f32::from_bits(0x7f80_0001); // signalling NaN
        let mut v = [0f32; 1];
        SharedOut::new(&mut v[..]).set(0, nan);
        assert_eq!(v[0].to_bits(), 0x7f80_0001);
    }

    #[test]
    fn null_pointers_are_empty_views() {
        let out = unsafe { SharedOut::<u16>::from_raw(core::ptr::null_mut(), 5) };
        assert!(out.is_empty());
        let inp = unsafe { input::<u32>(core::ptr::null(), 5) };
        assert!(inp.is_empty());
    }
}
