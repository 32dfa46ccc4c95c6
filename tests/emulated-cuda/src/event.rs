//! Events: points in a stream's work that the host and other streams can wait for,
//! stamped with the host time at which the stream reached them.

use std::ffi::c_uint;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::abi::*;
use crate::driver::{api, current, current_any, driver, put};
use crate::queue::Queue;
use crate::stream::submit;

pub struct Event {
    flags: c_uint,
    sticky: Arc<crate::queue::Sticky>,
    state: Mutex<EventState>,
}

#[derive(Default)]
struct EventState {
    /// The queue and ticket of the latest record.
    recorded: Option<(Arc<Queue>, u64)>,
    /// Records so far; the stamp below belongs to the record with this number.
    generation: u64,
    stamp: Option<(u64, Instant)>,
}

impl Event {
    pub fn recorded(&self) -> Option<(Arc<Queue>, u64)> {
        self.state.lock().unwrap().recorded.clone()
    }

    fn is_done(&self) -> bool {
        self.recorded().is_none_or(|(q, t)| q.is_done(t))
    }

    /// The time of the latest record once it has happened.
    fn time(&self) -> Result<Instant, CUresult> {
        let st = self.state.lock().unwrap();
        let Some((q, t)) = &st.recorded else { return Err(CUDA_ERROR_INVALID_HANDLE) };
        if !q.is_done(*t) {
            return Err(CUDA_ERROR_NOT_READY);
        }
        match st.stamp {
            Some((g, at)) if g == st.generation => Ok(at),
            // Skipped because the context faulted.
            _ => Err(self.sticky.get().err().unwrap_or(CUDA_ERROR_NOT_READY)),
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(ph: *mut CUevent, flags: c_uint) -> CUresult {
    api(|| {
        let ctx = current()?;
        if ph.is_null() || flags & !(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // An interprocess event must also disable timing, as in CUDA.
        if flags & CU_EVENT_INTERPROCESS != 0 && flags & CU_EVENT_DISABLE_TIMING == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let ev = Event { flags, sticky: Arc::clone(&ctx.sticky), state: Mutex::new(EventState::default()) };
        put(ph, driver()?.events.insert(Arc::new(ev)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: CUevent) -> CUresult {
    api(|| {
        // A pending record still completes; only the handle goes.
        driver()?.events.remove(event).map(drop).ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: CUevent, h: CUstream) -> CUresult {
    api(|| {
        let ctx = current()?;
        let ev = driver()?.events.get(event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let mut st = ev.state.lock().unwrap();
        st.generation += 1;
        let generation = st.generation;
        let stamped = Arc::clone(&ev);
        let (q, ticket) = submit(
            &ctx,
            h,
            Box::new(move || {
                stamped.state.lock().unwrap().stamp = Some((generation, Instant::now()));
                Ok(())
            }),
        )?;
        st.recorded = Some((q, ticket));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(event: CUevent) -> CUresult {
    api(|| {
        let ev = driver()?.events.get(event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        ev.sticky.get()?;
        if ev.is_done() {
            Ok(())
        } else {
            Err(CUDA_ERROR_NOT_READY)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: CUevent) -> CUresult {
    api(|| {
        let ev = driver()?.events.get(event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if let Some((q, t)) = ev.recorded() {
            q.wait(t);
        }
        ev.sticky.get()
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    api(|| {
        current_any()?;
        let d = driver()?;
        let (a, b) = (d.events.get(start), d.events.get(end));
        let (a, b) = a.zip(b).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if (a.flags | b.flags) & CU_EVENT_DISABLE_TIMING != 0 {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let (t0, t1) = (a.time()?, b.time()?);
        let millis = if t1 >= t0 { (t1 - t0).as_secs_f64() * 1e3 } else { -((t0 - t1).as_secs_f64() * 1e3) };
        put(ms, millis as f32)
    })
}
