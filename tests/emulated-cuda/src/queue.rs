//! An in-order work queue with its own worker thread: the engine behind every stream.
//!
//! Operations are numbered in submission order; `completed` counts those finished, so a
//! position ("ticket") in a queue is all that an event, a host wait or another queue's
//! wait needs. Once the context has a sticky error, queued work is skipped (its
//! position still completes), as a faulted CUDA context runs nothing more.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::abi::{CUresult, CUDA_ERROR_UNKNOWN};

/// Why queued work failed: the code becomes the context's sticky error and the message
/// is printed as the `ccoll-emu:` diagnostic.
pub struct Failure {
    pub code: CUresult,
    pub message: String,
}

pub type Work = Box<dyn FnOnce() -> Result<(), Failure> + Send>;

/// A context's sticky error: 0 until the first asynchronous failure.
#[derive(Default)]
pub struct Sticky(AtomicU32);

impl Sticky {
    pub fn get(&self) -> Result<(), CUresult> {
        match self.0.load(Ordering::Acquire) {
            0 => Ok(()),
            e => Err(e),
        }
    }

    fn set(&self, code: CUresult) {
        let _ = self.0.compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
    }
}

enum Op {
    Run(Work),
    /// Wait until the queue has completed this many operations.
    Wait(Arc<Queue>, u64),
}

struct State {
    ops: VecDeque<Op>,
    submitted: u64,
    completed: u64,
    closed: bool,
}

pub struct Queue {
    state: Mutex<State>,
    changed: Condvar,
    sticky: Arc<Sticky>,
}

/// The worker's stack: interpreted kernels may nest calls deeply.
const WORKER_STACK: usize = 64 << 20;

/// `CCOLL_EMU_STREAM_DELAY_US`: sleep before each queued operation, so that host code
/// that reads results without synchronising reads them before they exist.
fn delay() -> Option<Duration> {
    static DELAY: OnceLock<Option<Duration>> = OnceLock::new();
    *DELAY.get_or_init(|| {
        let us: u64 = std::env::var("CCOLL_EMU_STREAM_DELAY_US").ok()?.trim().parse().ok()?;
        (us > 0).then(|| Duration::from_micros(us))
    })
}

impl Queue {
    /// A new queue whose worker thread runs until [`Queue::close`] and the queue drains.
    pub fn start(sticky: Arc<Sticky>) -> Result<Arc<Queue>, CUresult> {
        let q = Arc::new(Queue {
            state: Mutex::new(State { ops: VecDeque::new(), submitted: 0, completed: 0, closed: false }),
            changed: Condvar::new(),
            sticky,
        });
        let worker = Arc::clone(&q);
        std::thread::Builder::new()
            .name("ccoll-emu-stream".into())
            .stack_size(WORKER_STACK)
            .spawn(move || worker.run())
            .map_err(|_| crate::abi::CUDA_ERROR_OUT_OF_MEMORY)?;
        Ok(q)
    }

    fn run(&self) {
        loop {
            let op = {
                let mut st = self.state.lock().unwrap();
                loop {
                    if let Some(op) = st.ops.pop_front() {
                        break op;
                    }
                    if st.closed {
                        return;
                    }
                    st = self.changed.wait(st).unwrap();
                }
            };
            match op {
                Op::Run(work) => {
                    if let Some(d) = delay() {
                        std::thread::sleep(d);
                    }
                    if self.sticky.get().is_ok() {
                        // A panic (an emulator bug) must not kill the worker: the
                        // stream would never complete and the host would wait forever.
                        let result = catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|_| {
                            Err(Failure { code: CUDA_ERROR_UNKNOWN, message: "internal error: queued work panicked".into() })
                        });
                        if let Err(f) = result {
                            eprintln!("ccoll-emu: {}", f.message);
                            self.sticky.set(f.code);
                        }
                    }
                }
                Op::Wait(other, ticket) => other.wait(ticket),
            }
            self.state.lock().unwrap().completed += 1;
            self.changed.notify_all();
        }
    }

    fn push(&self, op: Op) -> u64 {
        let mut st = self.state.lock().unwrap();
        st.ops.push_back(op);
        st.submitted += 1;
        self.changed.notify_all();
        st.submitted
    }

    /// Queues `work`; returns its ticket.
    pub fn push_run(&self, work: Work) -> u64 {
        self.push(Op::Run(work))
    }

    /// Makes later work wait until `other` reaches `ticket` (nothing if it already has).
    pub fn push_wait(&self, other: &Arc<Queue>, ticket: u64) {
        if !other.is_done(ticket) {
            self.push(Op::Wait(Arc::clone(other), ticket));
        }
    }

    /// The ticket of the last operation submitted so far.
    pub fn position(&self) -> u64 {
        self.state.lock().unwrap().submitted
    }

    pub fn is_done(&self, ticket: u64) -> bool {
        self.state.lock().unwrap().completed >= ticket
    }

    /// Blocks until the queue reaches `ticket`.
    pub fn wait(&self, ticket: u64) {
        let mut st = self.state.lock().unwrap();
        while st.completed < ticket {
            st = self.changed.wait(st).unwrap();
        }
    }

    /// Blocks until everything submitted so far has run.
    pub fn drain(&self) {
        self.wait(self.position());
    }

    /// Lets the worker exit once the queued work has run (a destroyed stream finishes
    /// its work, as in CUDA).
    pub fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.changed.notify_all();
    }
}
