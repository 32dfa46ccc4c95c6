//! Output slices that many grid positions write at distinct indices.
//!
//! A body is called once per grid position, concurrently on the GPU and on the CPU
//! executor's pool, so it cannot hold a `&mut [T]` of the whole output. [`SharedOut`]
//! views the output as atomic cells and stores with `Relaxed` ordering: safe Rust, the
//! same code on both targets, and on the GPU a plain global store with relaxed
//! semantics (`st.relaxed`), since grid-stride loops never write one index twice.

use core::marker::PhantomData;
use core::ops::Range;
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

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

cell_via_bits!(u8, AtomicU8, |v| v, |v| v);
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

/// An output that grid positions write in contiguous ranges they work out themselves
/// (an SZx block's payload at its scanned offset, a block's decoded values), handed out
/// as plain `&mut` slices so the codecs' block coders can write them directly.
pub struct Disjoint<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: access goes through `range_mut`, whose contract makes concurrent ranges disjoint.
unsafe impl<T: Send> Sync for Disjoint<'_, T> {}

impl<'a, T> Disjoint<'a, T> {
    /// Views `slice` for the duration of the borrow.
    pub fn new(slice: &'a mut [T]) -> Self {
        Disjoint { ptr: slice.as_mut_ptr(), len: slice.len(), _borrow: PhantomData }
    }

    /// Views `len` values at `ptr` (GPU entry points).
    ///
    /// # Safety
    /// `ptr` must be null (an empty view) or valid for reads and writes of `len` values
    /// for `'a`, accessed only through this view.
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        Disjoint { ptr, len: if ptr.is_null() { 0 } else { len }, _borrow: PhantomData }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the view holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values in `range`, or `None` if it is not inside the view.
    ///
    /// # Safety
    /// While the slice lives, no other slice from this view may overlap `range` (in a
    /// launch: the ranges of different grid positions, and of one position, are
    /// disjoint).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn range_mut(&self, range: Range<usize>) -> Option<&'a mut [T]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        Some(core::slice::from_raw_parts_mut(self.ptr.add(range.start), range.end - range.start))
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
    fn disjoint_ranges_write_into_the_slice() {
        let mut v = [0u8; 6];
        {
            let d = Disjoint::new(&mut v[..]);
            // SAFETY: the two ranges do not overlap.
            unsafe {
                d.range_mut(0..2).unwrap().copy_from_slice(&[1, 2]);
                d.range_mut(4..6).unwrap().copy_from_slice(&[5, 6]);
                assert!(d.range_mut(5..7).is_none());
                let (start, end) = (3, 2);
                assert!(d.range_mut(start..end).is_none());
            }
        }
        assert_eq!(v, [1, 2, 0, 0, 5, 6]);
    }

    #[test]
    fn null_pointers_are_empty_views() {
        let out = unsafe { SharedOut::<u16>::from_raw(core::ptr::null_mut(), 5) };
        assert!(out.is_empty());
        let inp = unsafe { input::<u32>(core::ptr::null(), 5) };
        assert!(inp.is_empty());
    }
}
