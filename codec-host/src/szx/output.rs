//! The output of the allocating decoder ([`decompress_with`](super::decompress_with)):
//! zeroed memory from the allocator, so that zero blocks need no writing, and a huge-page
//! hint for large outputs that will be written nearly everywhere.

use std::alloc::Layout;

use crate::{Element, Error, Result};

/// Outputs of at least this many bytes whose blocks are mostly not zero blocks are
/// advised to use transparent huge pages (two huge pages of 2 MiB).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// `n` values of `+0.0`, from the allocator's zeroed memory (`calloc`: a fresh mapping
/// for a large output is zero already, no page of it touched); an allocation failure is
/// an error, not an abort.
pub(super) fn zeroed_vec<T: Element>(n: usize) -> Result<Vec<T>> {
    let oom = || Error::OutOfMemory { bytes: n.saturating_mul(T::TYPE.size()) };
    let layout = Layout::array::<T>(n).map_err(|_| oom())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(oom());
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `n` values
    // of `T` (length and capacity `n`), and all of them are initialised: `T` is f32 or
    // f64 (`Element` is sealed), for which all-zero bits are `+0.0`.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// True if fewer than half of the blocks of `stream` are zero blocks (by its census,
/// [`describe`](super::describe)): nearly every page of its output will be written. A
/// stream the census rejects is not dense; its decoding reports why.
pub(super) fn dense(stream: &[u8]) -> bool {
    super::describe(stream).is_ok_and(|info| 2 * info.blocks.zero < info.blocks.total())
}

/// Advises the kernel to back the whole pages of `values` with transparent huge pages
/// (Linux `MADV_HUGEPAGE`, honoured where the system's setting is `madvise` or
/// `always`), when they take at least [`HUGE_PAGE_MIN_BYTES`]: a 2 MiB page faults in
/// once where 512 small ones would. Advice only: nothing happens elsewhere or on failure.
pub(super) fn advise_huge_pages<T: Element>(values: &mut [T]) {
    let bytes = std::mem::size_of_val(values);
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf only reads a system setting.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        if page == 0 {
            return;
        }
        let begin = (values.as_ptr() as usize).next_multiple_of(page);
        let end = (values.as_ptr() as usize + bytes) / page * page;
        if end > begin {
            // SAFETY: the range is whole pages inside `values`, memory this call holds
            // exclusively; MADV_HUGEPAGE changes how the kernel backs those pages, never
            // their contents. The result is ignored: it is advice.
            unsafe { libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE) };
        }
    }
}
