//! Device allocations, page-locked host memory, and every copy and memset.
//!
//! Copies follow CUDA's documented host synchronisation: a pageable host source is
//! staged when the call is made (so the caller may reuse it at once) and a page-locked
//! one is read when the stream gets there; a copy into pageable host memory returns
//! only when done, one into page-locked memory made by an async call lands whenever the
//! stream gets there. Synchronous calls go to the legacy default stream. Every device
//! range is checked against the live allocations before anything is queued, so a bad
//! pointer is INVALID_VALUE, never a segfault.

use std::alloc::Layout;
use std::ffi::{c_uint, c_ushort, c_void};
use std::sync::{Arc, Mutex};

use ptx_emulator::Memory;

use crate::abi::*;
use crate::context::Context;
use crate::driver::{api, current, driver, put};
use crate::queue::Failure;
use crate::stream::{run_and_wait, submit};

/// A page-locked host range: allocated here (with its layout) or registered.
pub struct PinnedRange {
    pub len: usize,
    pub layout: Option<Layout>,
}

/// Page-locked allocations are page aligned, as NVIDIA's are.
const PAGE: usize = 4096;
/// cuMemAllocPitch rows are padded to this many bytes.
const PITCH_ALIGN: usize = 512;

/// A host pointer carried to a stream's worker thread.
#[derive(Clone, Copy)]
struct HostPtr(*mut u8);
// SAFETY: the API's callers guarantee the memory stays valid until the stream reaches
// the copy (CUDA's contract for asynchronous copies); synchronous calls wait.
unsafe impl Send for HostPtr {}

/// Where a copy reads from or writes to, as the caller gave it.
#[derive(Clone, Copy)]
pub enum Place {
    Host(*const u8),
    Device(CUdeviceptr),
}

enum Source {
    Host(HostPtr),
    /// Pageable host bytes copied at the call.
    Staged(Vec<u8>),
    Device(CUdeviceptr),
}

enum Target {
    Host(HostPtr),
    Device(CUdeviceptr),
}

struct Copy {
    src: Source,
    dst: Target,
    len: usize,
}

fn pinned_covers(pinned: &std::collections::BTreeMap<usize, PinnedRange>, ptr: usize, len: usize) -> bool {
    pinned.range(..=ptr).next_back().is_some_and(|(&base, r)| ptr + len <= base + r.len)
}

fn is_pinned(ptr: *const u8, len: usize) -> Result<bool, CUresult> {
    Ok(pinned_covers(&driver()?.pinned.lock().unwrap(), ptr as usize, len))
}

/// INVALID_VALUE unless `[addr, addr + len)` lies in one live allocation.
fn check_device(mem: &Memory, addr: CUdeviceptr, len: usize) -> Result<(), CUresult> {
    match mem.allocation_of(addr) {
        Some((base, size)) if addr.checked_add(len as u64).is_some_and(|end| end <= base + size as u64) => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn run_copies(mem: &Mutex<Memory>, copies: Vec<Copy>) -> Result<(), Failure> {
    let fail = |e: ptx_emulator::MemError| Failure { code: CUDA_ERROR_ILLEGAL_ADDRESS, message: format!("copy: {e}") };
    let mut mem = mem.lock().unwrap();
    for c in copies {
        let mut bytes = Vec::new();
        let data: &[u8] = match &c.src {
            // SAFETY: see HostPtr.
            Source::Host(p) => unsafe { std::slice::from_raw_parts(p.0, c.len) },
            Source::Staged(v) => v,
            Source::Device(a) => {
                bytes.resize(c.len, 0);
                mem.read(*a, &mut bytes).map_err(fail)?;
                &bytes
            }
        };
        match c.dst {
            // SAFETY: see HostPtr; `copy` allows the source to overlap.
            Target::Host(p) => unsafe { std::ptr::copy(data.as_ptr(), p.0, c.len) },
            Target::Device(a) => mem.write(a, data).map_err(fail)?,
        }
    }
    Ok(())
}

/// Checks and queues copies of `(src, dst, len)` on stream `h` (the legacy stream for a
/// synchronous call) and waits where CUDA's host synchronisation says so.
fn transfer(ctx: &Context, h: CUstream, is_async: bool, parts: &[(Place, Place, usize)]) -> Result<(), CUresult> {
    let d = driver()?;
    let mut copies = Vec::with_capacity(parts.len());
    let mut wait = false;
    {
        let mem = d.mem.lock().unwrap();
        for &(src, dst, len) in parts.iter().filter(|p| p.2 > 0) {
            let src = match src {
                Place::Device(a) => {
                    check_device(&mem, a, len)?;
                    Source::Device(a)
                }
                Place::Host(p) if p.is_null() => return Err(CUDA_ERROR_INVALID_VALUE),
                Place::Host(p) if is_pinned(p, len)? => {
                    wait |= !is_async;
                    Source::Host(HostPtr(p.cast_mut()))
                }
                // SAFETY: the caller's buffer of `len` bytes, read before returning.
                Place::Host(p) => Source::Staged(unsafe { std::slice::from_raw_parts(p, len) }.to_vec()),
            };
            let dst = match dst {
                Place::Device(a) => {
                    check_device(&mem, a, len)?;
                    Target::Device(a)
                }
                Place::Host(p) if p.is_null() => return Err(CUDA_ERROR_INVALID_VALUE),
                Place::Host(p) => {
                    wait |= !(is_async && is_pinned(p, len)?);
                    Target::Host(HostPtr(p.cast_mut()))
                }
            };
            copies.push(Copy { src, dst, len });
        }
    }
    if copies.is_empty() {
        return Ok(());
    }
    let mem = Arc::clone(&d.mem);
    let work = Box::new(move || run_copies(&mem, copies));
    if wait {
        run_and_wait(ctx, h, work)
    } else {
        submit(ctx, h, work).map(drop)
    }
}

/// Sync calls use the legacy default stream.
const LEGACY: CUstream = std::ptr::null_mut();

fn host(p: *const c_void) -> Place {
    Place::Host(p.cast())
}

/// UVA: a pointer inside a live device allocation is device memory, anything else host.
fn classify(p: CUdeviceptr) -> Result<Place, CUresult> {
    let mem = driver()?.mem.lock().unwrap();
    Ok(match mem.allocation_of(p) {
        Some(_) => Place::Device(p),
        None => Place::Host(p as *const u8),
    })
}

fn memset(h: CUstream, dst: CUdeviceptr, pattern: &[u8], count: usize) -> Result<(), CUresult> {
    let ctx = current()?;
    if count == 0 {
        return Ok(());
    }
    let d = driver()?;
    let bytes = count.checked_mul(pattern.len()).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if !dst.is_multiple_of(pattern.len() as u64) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    check_device(&d.mem.lock().unwrap(), dst, bytes)?;
    let (mem, pattern) = (Arc::clone(&d.mem), pattern.to_vec());
    let work = Box::new(move || {
        mem.lock().unwrap().fill(dst, &pattern, count).map_err(|e| Failure { code: CUDA_ERROR_ILLEGAL_ADDRESS, message: format!("memset: {e}") })
    });
    submit(&ctx, h, work).map(drop)
}

fn alloc_device(ctx: &Context, bytes: usize) -> Result<CUdeviceptr, CUresult> {
    if bytes == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let d = driver()?;
    let mut mem = d.mem.lock().unwrap();
    let addr = mem.alloc(bytes).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    ctx.allocations.lock().unwrap().insert(addr);
    Ok(addr)
}

/// Frees one of `ctx`'s allocations by its base address.
fn free_device(ctx: &Context, addr: CUdeviceptr) -> Result<(), CUresult> {
    if !ctx.allocations.lock().unwrap().remove(&addr) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    driver()?.mem.lock().unwrap().free(addr).map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
    api(|| {
        let ctx = current()?;
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc_device(&ctx, bytes)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocPitch(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        if dptr.is_null() || pitch.is_null() || ![4, 8, 16].contains(&elem) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let p = width.checked_next_multiple_of(PITCH_ALIGN).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let bytes = p.checked_mul(height).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(dptr, alloc_device(&ctx, bytes)?)?;
        put(pitch, p)
    })
}

/// Stream-ordered allocation: the memory exists at once (earlier than CUDA promises).
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytes: usize, h: CUstream) -> CUresult {
    api(|| {
        let ctx = current()?;
        crate::stream::lookup(&ctx, h)?;
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc_device(&ctx, bytes)?)
    })
}

/// Frees when the stream reaches this point, not before.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: CUdeviceptr, h: CUstream) -> CUresult {
    api(|| {
        let ctx = current()?;
        if !ctx.allocations.lock().unwrap().contains(&dptr) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let owner = Arc::clone(&ctx);
        let work = Box::new(move || {
            free_device(&owner, dptr).map_err(|code| Failure { code, message: format!("cuMemFreeAsync({dptr:#x}): not a live allocation") })
        });
        submit(&ctx, h, work).map(drop)
    })
}

/// Waits for the device first: memory that queued work still uses is not pulled from
/// under it (what cudaFree's implicit synchronisation gives on hardware). With unified
/// addressing the pointer names its context, which need not be current (cust frees
/// buffers wherever they are dropped).
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    api(|| {
        let d = driver()?;
        let owner = d.contexts.all().into_iter().find(|c| c.allocations.lock().unwrap().contains(&dptr));
        let ctx = owner.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        ctx.synchronize()?;
        free_device(&ctx, dptr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    api(|| {
        current()?;
        let mem = driver()?.mem.lock().unwrap();
        put(free, mem.capacity().saturating_sub(mem.live_bytes()))?;
        put(total, mem.capacity())
    })
}

fn alloc_pinned(pp: *mut *mut c_void, bytes: usize) -> Result<(), CUresult> {
    current()?;
    if pp.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let layout = Layout::from_size_align(bytes.max(1), PAGE).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    driver()?.pinned.lock().unwrap().insert(p as usize, PinnedRange { len: bytes, layout: Some(layout) });
    // SAFETY: checked non-null above.
    unsafe { put(pp, p.cast()) }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytes: usize) -> CUresult {
    api(|| alloc_pinned(pp, bytes))
}

/// The original entry point, with a 32-bit size.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost(pp: *mut *mut c_void, bytes: c_uint) -> CUresult {
    api(|| alloc_pinned(pp, bytes as usize))
}

/// Flags (portable, device-mapped, write-combined) change nothing here.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut *mut c_void, bytes: usize, flags: c_uint) -> CUresult {
    api(|| {
        if flags & !0x7 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        alloc_pinned(pp, bytes)
    })
}

/// Waits for every context's work first (queued copies may still use the memory), as
/// cudaFreeHost waits for the device.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    api(|| {
        let d = driver()?;
        match d.pinned.lock().unwrap().get(&(p as usize)) {
            Some(PinnedRange { layout: Some(_), .. }) => {}
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        for ctx in d.contexts.all() {
            ctx.synchronize()?;
        }
        let range = d.pinned.lock().unwrap().remove(&(p as usize)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if let Some(layout) = range.layout {
            // SAFETY: allocated by alloc_pinned with this layout.
            std::alloc::dealloc(p.cast(), layout);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostRegister_v2(p: *mut c_void, bytes: usize, flags: c_uint) -> CUresult {
    api(|| {
        current()?;
        if p.is_null() || bytes == 0 || flags & !0xf != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut pinned = driver()?.pinned.lock().unwrap();
        let (start, end) = (p as usize, p as usize + bytes);
        let overlaps = pinned.range(..end).next_back().is_some_and(|(&base, r)| base + r.len > start);
        if overlaps {
            return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        }
        pinned.insert(start, PinnedRange { len: bytes, layout: None });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CUresult {
    api(|| {
        let ctx = current()?;
        let d = driver()?;
        if !matches!(d.pinned.lock().unwrap().get(&(p as usize)), Some(PinnedRange { layout: None, .. })) {
            return Err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
        }
        // Queued copies may still read or write the range.
        ctx.synchronize()?;
        d.pinned.lock().unwrap().remove(&(p as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    api(|| transfer(&*current()?, LEGACY, false, &[(host(src), Place::Device(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    api(|| transfer(&*current()?, LEGACY, false, &[(Place::Device(src), host(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    api(|| transfer(&*current()?, LEGACY, false, &[(Place::Device(src), Place::Device(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, h: CUstream) -> CUresult {
    api(|| transfer(&*current()?, h, true, &[(host(src), Place::Device(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, h: CUstream) -> CUresult {
    api(|| transfer(&*current()?, h, true, &[(Place::Device(src), host(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, h: CUstream) -> CUresult {
    api(|| transfer(&*current()?, h, true, &[(Place::Device(src), Place::Device(dst), n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    api(|| transfer(&*current()?, LEGACY, false, &[(classify(src)?, classify(dst)?, n)]))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, h: CUstream) -> CUresult {
    api(|| transfer(&*current()?, h, true, &[(classify(src)?, classify(dst)?, n)]))
}

/// One side of a 2D copy: its row-0 column-0 place.
fn place_2d(kind: u32, host_ptr: *const c_void, device: CUdeviceptr, x: usize, y: usize, pitch: usize) -> Result<Place, CUresult> {
    let offset = y.checked_mul(pitch).and_then(|o| o.checked_add(x)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    match kind {
        CU_MEMORYTYPE_HOST => Ok(Place::Host(host_ptr.cast::<u8>().wrapping_add(offset))),
        CU_MEMORYTYPE_DEVICE => Ok(Place::Device(device + offset as u64)),
        CU_MEMORYTYPE_UNIFIED => classify(device).map(|p| match p {
            Place::Device(a) => Place::Device(a + offset as u64),
            Place::Host(h) => Place::Host(h.wrapping_add(offset)),
        }),
        CU_MEMORYTYPE_ARRAY => Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn offset(p: Place, by: usize) -> Place {
    match p {
        Place::Host(h) => Place::Host(h.wrapping_add(by)),
        Place::Device(a) => Place::Device(a + by as u64),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpy2D_v2(copy: *const CudaMemcpy2D) -> CUresult {
    api(|| {
        let ctx = current()?;
        let c = copy.as_ref().ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let (w, rows) = (c.width_in_bytes, c.height);
        if rows > 1 && (c.src_pitch < w || c.dst_pitch < w) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let src = place_2d(c.src_memory_type, c.src_host, c.src_device, c.src_x_in_bytes, c.src_y, c.src_pitch)?;
        let dst = place_2d(c.dst_memory_type, c.dst_host, c.dst_device, c.dst_x_in_bytes, c.dst_y, c.dst_pitch)?;
        let parts: Vec<(Place, Place, usize)> = (0..rows).map(|r| (offset(src, r * c.src_pitch), offset(dst, r * c.dst_pitch), w)).collect();
        // Synchronous with respect to the host, like the other synchronous copies.
        transfer(&ctx, LEGACY, false, &parts)?;
        ctx.legacy.drain();
        ctx.sticky.get()
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, value: u8, n: usize) -> CUresult {
    api(|| memset(LEGACY, dst, &[value], n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(dst: CUdeviceptr, value: c_ushort, n: usize) -> CUresult {
    api(|| memset(LEGACY, dst, &value.to_le_bytes(), n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: CUdeviceptr, value: c_uint, n: usize) -> CUresult {
    api(|| memset(LEGACY, dst, &value.to_le_bytes(), n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(dst: CUdeviceptr, value: u8, n: usize, h: CUstream) -> CUresult {
    api(|| memset(h, dst, &[value], n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(dst: CUdeviceptr, value: c_ushort, n: usize, h: CUstream) -> CUresult {
    api(|| memset(h, dst, &value.to_le_bytes(), n))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(dst: CUdeviceptr, value: c_uint, n: usize, h: CUstream) -> CUresult {
    api(|| memset(h, dst, &value.to_le_bytes(), n))
}
