//! Streams: ordered queues of work that run asynchronously to the host, and the
//! implicit synchronisation of the legacy default stream.
//!
//! As in CUDA, work on the legacy default stream (handle 0 or CU_STREAM_LEGACY) waits
//! for all earlier work on the context's blocking streams, and work on a blocking
//! stream waits for earlier legacy-stream work; streams created with
//! CU_STREAM_NON_BLOCKING take part in neither. The per-thread default stream is
//! treated as the legacy one.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

use crate::abi::*;
use crate::context::{Context, GREATEST_PRIORITY, LEAST_PRIORITY};
use crate::driver::{api, current, current_any, driver, put};
use crate::queue::{Queue, Work};

pub struct Stream {
    pub ctx: usize,
    pub queue: Arc<Queue>,
    pub flags: c_uint,
    pub priority: c_int,
}

impl Stream {
    fn blocking(&self) -> bool {
        self.flags & CU_STREAM_NON_BLOCKING == 0
    }
}

fn is_default(h: CUstream) -> bool {
    h.is_null() || h as usize == CU_STREAM_LEGACY || h as usize == CU_STREAM_PER_THREAD
}

/// The user stream `h` of `ctx`; None for a default-stream handle.
pub fn lookup(ctx: &Context, h: CUstream) -> Result<Option<Arc<Stream>>, CUresult> {
    if is_default(h) {
        return Ok(None);
    }
    let s = driver()?.streams.get(h).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if s.ctx != ctx.handle {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    Ok(Some(s))
}

/// The queue that work on `h` goes to, after queueing the implicit waits that ordering
/// against the legacy default stream requires.
fn prepare(ctx: &Context, h: CUstream) -> Result<Arc<Queue>, CUresult> {
    match lookup(ctx, h)? {
        Some(s) => {
            if s.blocking() {
                s.queue.push_wait(&ctx.legacy, ctx.legacy.position());
            }
            Ok(Arc::clone(&s.queue))
        }
        None => {
            let streams: Vec<Arc<Stream>> = ctx.streams.lock().unwrap().clone();
            for s in streams.iter().filter(|s| s.blocking()) {
                ctx.legacy.push_wait(&s.queue, s.queue.position());
            }
            Ok(Arc::clone(&ctx.legacy))
        }
    }
}

/// Queues `work` on stream `h` of `ctx`; returns the queue and the work's ticket.
pub fn submit(ctx: &Context, h: CUstream, work: Work) -> Result<(Arc<Queue>, u64), CUresult> {
    let q = prepare(ctx, h)?;
    let ticket = q.push_run(work);
    Ok((q, ticket))
}

/// Queues `work` on stream `h` and blocks until it has run: the sticky error if it (or
/// earlier work) failed.
pub fn run_and_wait(ctx: &Context, h: CUstream, work: Work) -> Result<(), CUresult> {
    let (q, ticket) = submit(ctx, h, work)?;
    q.wait(ticket);
    ctx.sticky.get()
}

/// Makes later work on `h` wait until `other` reaches `ticket`.
pub fn submit_wait(ctx: &Context, h: CUstream, other: &Arc<Queue>, ticket: u64) -> Result<(), CUresult> {
    prepare(ctx, h)?.push_wait(other, ticket);
    Ok(())
}

/// The queue of stream `h` (user or default) without queueing anything.
fn queue_of(ctx: &Context, h: CUstream) -> Result<Arc<Queue>, CUresult> {
    Ok(lookup(ctx, h)?.map_or_else(|| Arc::clone(&ctx.legacy), |s| Arc::clone(&s.queue)))
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(ph: *mut CUstream, flags: c_uint) -> CUresult {
    cuStreamCreateWithPriority(ph, flags, LEAST_PRIORITY)
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(ph: *mut CUstream, flags: c_uint, priority: c_int) -> CUresult {
    api(|| {
        let ctx = current()?;
        if ph.is_null() || flags & !CU_STREAM_NON_BLOCKING != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // Out-of-range priorities are clamped, as CUDA does.
        let priority = priority.clamp(GREATEST_PRIORITY, LEAST_PRIORITY);
        let stream = Arc::new(Stream { ctx: ctx.handle, queue: Queue::start(Arc::clone(&ctx.sticky))?, flags, priority });
        ctx.streams.lock().unwrap().push(Arc::clone(&stream));
        put(ph, driver()?.streams.insert(stream))
    })
}

/// The stream's context need not be current (cust destroys streams wherever they drop).
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(h: CUstream) -> CUresult {
    api(|| {
        let d = driver()?;
        if is_default(h) {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let s = d.streams.remove(h).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        // Queued work still runs; the worker exits after it.
        s.queue.close();
        if let Some(ctx) = d.contexts.get(s.ctx as CUcontext) {
            ctx.streams.lock().unwrap().retain(|x| !Arc::ptr_eq(x, &s));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(h: CUstream) -> CUresult {
    api(|| {
        let ctx = current_any()?;
        queue_of(&ctx, h)?.drain();
        ctx.sticky.get()
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(h: CUstream) -> CUresult {
    api(|| {
        let ctx = current()?;
        let q = queue_of(&ctx, h)?;
        if q.is_done(q.position()) {
            ctx.sticky.get()
        } else {
            Err(CUDA_ERROR_NOT_READY)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamGetFlags(h: CUstream, flags: *mut c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        put(flags, lookup(&ctx, h)?.map_or(0, |s| s.flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamGetPriority(h: CUstream, priority: *mut c_int) -> CUresult {
    api(|| {
        let ctx = current()?;
        put(priority, lookup(&ctx, h)?.map_or(LEAST_PRIORITY, |s| s.priority))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitEvent(h: CUstream, event: CUevent, flags: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let ev = driver()?.events.get(event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        // The wait is on the event's most recent record at the time of this call.
        match ev.recorded() {
            Some((q, ticket)) => submit_wait(&ctx, h, &q, ticket),
            None => queue_of(&ctx, h).map(drop),
        }
    })
}

/// A host function and its argument, run on a stream's worker thread.
struct HostCall(unsafe extern "C" fn(*mut c_void), *mut c_void);
// SAFETY: the caller of cuLaunchHostFunc hands the pointer to the driver's thread, as
// CUDA's contract says.
unsafe impl Send for HostCall {}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(h: CUstream, f: CUhostFn, user_data: *mut c_void) -> CUresult {
    api(|| {
        let ctx = current()?;
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let call = HostCall(f, user_data);
        submit(
            &ctx,
            h,
            Box::new(move || {
                let call = call;
                // SAFETY: see HostCall.
                unsafe { (call.0)(call.1) };
                Ok(())
            }),
        )
        .map(drop)
    })
}
