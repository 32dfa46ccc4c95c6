//! Byte messages over a communicator: blocking and non-blocking sends and receives of
//! buffers the request owns, and the few small control collectives the algorithms need.
//!
//! rsmpi ties a non-blocking request to a borrowed buffer through scopes; the pipelined
//! algorithms keep a changing set of requests whose buffers are created on the fly, so
//! this module owns each buffer inside its request instead. All `unsafe` MPI calls of
//! the crate's algorithms are here.
//!
//! Every MPI return code is checked: a failure aborts the job with a message
//! ([`checked`]), whatever error handler the caller's communicator has (with the default,
//! `MPI_ERRORS_ARE_FATAL`, the library aborts before returning). Statuses are read only
//! after a call that succeeded.

use std::mem::MaybeUninit;
use std::os::raw::c_int;
use std::rc::Rc;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

use crate::{idle, spare, watchdog};

/// Message tags of the collectives. They stay below 32768, the smallest `MPI_TAG_UB` the
/// standard allows; user tags of [`crate::CompressedCollectives::c_send`] must be below
/// [`TAG_BASE`].
pub const TAG_BASE: i32 = 32_700;
pub(crate) const TAG_RING: i32 = TAG_BASE + 1;
pub(crate) const TAG_GATHER_RING: i32 = TAG_BASE + 2;
pub(crate) const TAG_TREE: i32 = TAG_BASE + 3;
pub(crate) const TAG_ALLTOALL: i32 = TAG_BASE + 4;
pub(crate) const TAG_FOLD: i32 = TAG_BASE + 5;
pub(crate) const TAG_DOUBLING: i32 = TAG_BASE + 6;
pub(crate) const TAG_P2P_ACK: i32 = TAG_BASE + 7;
pub(crate) const TAG_REDUCE_SCATTER: i32 = TAG_BASE + 8;

/// A communicator handle with its rank and size, copied into every algorithm.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comm {
    raw: ffi::MPI_Comm,
    pub rank: usize,
    pub size: usize,
}

fn count(len: usize) -> c_int {
    // `ops::size_check` bounds every message of a call, frame headers included, by the
    // MPI count limit before anything is sent, so this cannot fail.
    c_int::try_from(len).expect("message longer than MPI's count limit")
}

/// Aborts the job if an MPI call failed: the request, status or buffer it should have
/// filled cannot be trusted, and the peers' schedule cannot be finished.
fn checked(rc: c_int, what: &str) {
    if rc != ffi::MPI_SUCCESS as c_int {
        eprintln!("collectives: {what} failed with MPI error code {rc}; aborting the job");
        // SAFETY: MPI is initialised (a call just returned); MPI_Abort does not return.
        unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, 1) };
    }
}

/// The step of a schedule a tag belongs to (for the watchdog's report).
fn step_of(tag: i32) -> &'static str {
    match tag {
        TAG_RING => "ring reduce-scatter step",
        TAG_GATHER_RING => "ring allgather step",
        TAG_TREE => "binomial tree step",
        TAG_ALLTOALL => "alltoall exchange",
        TAG_FOLD => "recursive doubling fold",
        TAG_DOUBLING => "recursive doubling exchange",
        TAG_P2P_ACK => "point-to-point acceptance",
        TAG_REDUCE_SCATTER => "direct reduce-scatter",
        _ => "point-to-point transfer",
    }
}

fn byte_type() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

fn u64_type() -> ffi::MPI_Datatype {
    u64::equivalent_datatype().as_raw()
}

/// Bytes a completed receive got. `MPI_Get_count` answers `MPI_UNDEFINED` only for a
/// length that is not a whole number of elements, impossible for bytes; it would read as
/// an empty message, which every receiver rejects as a bad frame.
fn received_len(status: &ffi::MPI_Status) -> usize {
    let mut n: c_int = 0;
    // SAFETY: `status` was filled by a completed receive.
    checked(unsafe { ffi::MPI_Get_count(status, byte_type(), &mut n) }, "MPI_Get_count");
    usize::try_from(n).unwrap_or(0)
}

impl Comm {
    /// The handle of an rsmpi communicator.
    pub fn of<C: Communicator + AsRaw<Raw = ffi::MPI_Comm>>(c: &C) -> Comm {
        Comm { raw: c.as_raw(), rank: c.rank() as usize, size: c.size() as usize }
    }

    /// A handle that must not communicate: for tests of the local steps of a call.
    #[cfg(test)]
    pub fn detached(rank: usize, size: usize) -> Comm {
        // SAFETY: reading an extern constant.
        Comm { raw: unsafe { ffi::RSMPI_COMM_NULL }, rank, size }
    }

    /// Rank `(rank + delta) mod size`.
    pub fn peer(&self, delta: isize) -> usize {
        (self.rank as isize + delta).rem_euclid(self.size as isize) as usize
    }

    /// Sends `bytes` and waits until the buffer may be reused.
    pub fn send(&self, dest: usize, tag: i32, bytes: &[u8]) {
        watchdog::waiting(|| format!("rank {dest} to take a message ({})", step_of(tag)));
        let mut req = null_request();
        // SAFETY: the buffer is valid for `bytes.len()` bytes until the request completes,
        // which `wait_request` waits for before the borrow ends.
        let rc = unsafe { ffi::MPI_Isend(bytes.as_ptr().cast(), count(bytes.len()), byte_type(), dest as c_int, tag, self.raw, &mut req) };
        checked(rc, "MPI_Isend");
        wait_request(&mut req, &mut MaybeUninit::uninit());
    }

    /// Receives the next message from `src` with `tag`, whatever its length.
    pub fn recv(&self, src: usize, tag: i32) -> Vec<u8> {
        let mut msg = MaybeUninit::<ffi::MPI_Message>::uninit();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        watchdog::waiting(|| format!("a message from rank {src} ({})", step_of(tag)));
        // SAFETY: Mprobe (or an Improbe that found one) fills `msg` and `status`; Mrecv
        // writes the probed length, which is a message that exists, not a peer's claim,
        // into a buffer of at least that capacity.
        unsafe {
            if idle::sleeps() {
                idle::until(|| {
                    let mut found: c_int = 0;
                    checked(ffi::MPI_Improbe(src as c_int, tag, self.raw, &mut found, msg.as_mut_ptr(), status.as_mut_ptr()), "MPI_Improbe");
                    found != 0
                });
            } else {
                checked(ffi::MPI_Mprobe(src as c_int, tag, self.raw, msg.as_mut_ptr(), status.as_mut_ptr()), "MPI_Mprobe");
            }
            let len = received_len(status.assume_init_ref());
            let mut buf = spare::take(len);
            let rc = ffi::MPI_Mrecv(buf.as_mut_ptr().cast(), count(len), byte_type(), msg.as_mut_ptr(), status.as_mut_ptr());
            checked(rc, "MPI_Mrecv");
            // Mrecv wrote the `len` bytes of the message (a failure aborted above).
            buf.set_len(len);
            buf
        }
    }

    /// Starts sending `buf` (owned or shared) to `dest`.
    pub fn isend(&self, dest: usize, tag: i32, buf: impl Into<Buf>) -> Pending {
        let buf = buf.into();
        let mut req = null_request();
        let bytes = buf.bytes();
        // SAFETY: the heap buffer lives in the returned request until the send completes
        // (or forever, if the request is dropped early).
        let rc = unsafe { ffi::MPI_Isend(bytes.as_ptr().cast(), count(bytes.len()), byte_type(), dest as c_int, tag, self.raw, &mut req) };
        checked(rc, "MPI_Isend");
        Pending { req, buf, received: None, consumed: false, what: (false, dest, tag) }
    }

    /// Starts receiving a message of at most `capacity` bytes from `src`.
    pub fn irecv(&self, src: usize, tag: i32, capacity: usize) -> Pending {
        // Not zeroed: a frame is mostly much smaller than the capacity (the raw size of
        // its values), and only what MPI writes is ever read (see `take_bytes`).
        let mut vec = spare::take(capacity);
        let mut req = null_request();
        // SAFETY: as for `isend`; the allocation holds `capacity` bytes and is written
        // only by MPI until completion.
        let rc = unsafe { ffi::MPI_Irecv(vec.as_mut_ptr().cast(), count(capacity), byte_type(), src as c_int, tag, self.raw, &mut req) };
        checked(rc, "MPI_Irecv");
        Pending { req, buf: Buf::Owned(vec), received: None, consumed: false, what: (true, src, tag) }
    }

    /// Element-wise minimum of `words` over all ranks, in place. Started nonblocking,
    /// so that a rank that comes early waits as [`idle`] says; `purpose` completes the
    /// watchdog's "waiting for every rank of N to ...".
    pub fn allreduce_min_u64(&self, words: &mut [u64], purpose: &str) {
        let send = words.to_vec();
        watchdog::waiting(|| format!("every rank of {} to {purpose} (MPI_Allreduce)", self.size));
        let mut req = null_request();
        // SAFETY: both buffers hold `words.len()` u64 and outlive the wait below.
        let rc = unsafe { ffi::MPI_Iallreduce(send.as_ptr().cast(), words.as_mut_ptr().cast(), count(words.len()), u64_type(), ffi::RSMPI_MIN, self.raw, &mut req) };
        checked(rc, "MPI_Iallreduce");
        wait_request(&mut req, &mut MaybeUninit::uninit());
    }

    /// Every rank's `value`, by rank (nonblocking, as [`Comm::allreduce_min_u64`]).
    pub fn allgather_u64(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.size];
        watchdog::waiting(|| format!("every rank of {} to exchange message sizes (MPI_Allgather)", self.size));
        let mut req = null_request();
        // SAFETY: one u64 sent, `size` received, both outliving the wait below.
        let rc = unsafe { ffi::MPI_Iallgather((&value as *const u64).cast(), 1, u64_type(), all.as_mut_ptr().cast(), 1, u64_type(), self.raw, &mut req) };
        checked(rc, "MPI_Iallgather");
        wait_request(&mut req, &mut MaybeUninit::uninit());
        all
    }
}

/// Waits for an active request of this process, as [`idle`] says, and fills `status`.
fn wait_request(req: &mut ffi::MPI_Request, status: &mut MaybeUninit<ffi::MPI_Status>) {
    if idle::sleeps() {
        idle::until(|| {
            let mut done: c_int = 0;
            // SAFETY: `req` is an active request of this process.
            checked(unsafe { ffi::MPI_Test(req, &mut done, status.as_mut_ptr()) }, "MPI_Test");
            done != 0
        });
    } else {
        // SAFETY: as above.
        checked(unsafe { ffi::MPI_Wait(req, status.as_mut_ptr()) }, "MPI_Wait");
    }
}

fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an extern constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// A frame several sends (or a send and this rank's own decoding) share: the bytes as
/// they were received or encoded, moved in without a copy (an `Rc<[u8]>` made from a
/// `Vec` copies it, into memory freshly faulted in for every forwarded chunk).
pub(crate) type SharedFrame = Rc<Vec<u8>>;

/// The buffer of a request: owned, or shared between several sends of the same bytes.
pub(crate) enum Buf {
    Owned(Vec<u8>),
    Shared(SharedFrame),
}

impl Buf {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Buf::Owned(v) => v,
            Buf::Shared(r) => r,
        }
    }
}

impl From<Vec<u8>> for Buf {
    fn from(v: Vec<u8>) -> Self {
        Buf::Owned(v)
    }
}

impl From<SharedFrame> for Buf {
    fn from(r: SharedFrame) -> Self {
        Buf::Shared(r)
    }
}

/// A started send or receive that owns its buffer.
pub(crate) struct Pending {
    req: ffi::MPI_Request,
    buf: Buf,
    /// Bytes received, once a receive completes.
    received: Option<usize>,
    consumed: bool,
    /// (a receive?, peer, tag), for the watchdog's report.
    what: (bool, usize, i32),
}

impl Pending {
    /// True once the operation has completed (drives MPI progress).
    pub fn test(&mut self) -> bool {
        if self.done() {
            return true;
        }
        let mut flag: c_int = 0;
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `req` is an active request of this process.
        checked(unsafe { ffi::MPI_Test(&mut self.req, &mut flag, status.as_mut_ptr()) }, "MPI_Test");
        if flag != 0 {
            // SAFETY: a completed test fills the status.
            self.complete(self.req, unsafe { status.assume_init_ref() });
        }
        flag != 0
    }

    /// Waits for completion.
    pub fn wait(&mut self) {
        if !self.done() {
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            watchdog::waiting(|| self.describe());
            wait_request(&mut self.req, &mut status);
            // SAFETY: a completed wait fills the status.
            self.complete(self.req, unsafe { status.assume_init_ref() });
        }
    }

    /// True once the operation has completed (no MPI call: see [`Pending::test`]).
    pub fn done(&self) -> bool {
        self.req == null_request()
    }

    /// Records the completion of the request, `req` now being its null handle, from its
    /// status: the bytes received (0 for a send, whose status carries no count).
    fn complete(&mut self, req: ffi::MPI_Request, status: &ffi::MPI_Status) {
        self.req = req;
        self.received = Some(if self.what.0 { received_len(status) } else { 0 });
    }

    fn describe(&self) -> String {
        let (receive, peer, tag) = self.what;
        if receive {
            format!("a message from rank {peer} ({})", step_of(tag))
        } else {
            format!("rank {peer} to take a message ({})", step_of(tag))
        }
    }

    /// The bytes a receive got (waits for it first); leaves the request consumed.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        self.wait();
        let n = self.received.unwrap_or(0);
        self.consumed = true;
        match std::mem::replace(&mut self.buf, Buf::Owned(Vec::new())) {
            Buf::Owned(mut v) if self.what.0 => {
                // SAFETY: the receive was posted on `v`'s allocation, and MPI wrote the
                // first `n` bytes of it (a longer message is an error that aborts).
                unsafe { v.set_len(n.min(v.capacity())) };
                v
            }
            Buf::Owned(mut v) => {
                v.truncate(n);
                v
            }
            Buf::Shared(r) => r[..n].to_vec(),
        }
    }

    /// True once [`Pending::take_bytes`] took the data.
    pub fn consumed(&self) -> bool {
        self.consumed
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.done() {
            // A finished send's frame (its last holder), or a receive nobody took.
            recycle(std::mem::replace(&mut self.buf, Buf::Owned(Vec::new())));
        } else {
            // Dropped while MPI may still touch the buffer (only on a panic path): let the
            // request finish on its own and leak the buffer rather than free it under MPI.
            // SAFETY: `req` is active; freeing it is allowed, the buffer stays valid. The
            // return code is not checked: this runs while a panic unwinds.
            unsafe { ffi::MPI_Request_free(&mut self.req) };
            std::mem::forget(std::mem::replace(&mut self.buf, Buf::Owned(Vec::new())));
        }
    }
}

/// Hands a message buffer back for reuse ([`spare`]) where this was its last holder:
/// for received frames, once they are decoded and not forwarded.
pub(crate) fn recycle(buf: impl Into<Buf>) {
    match buf.into() {
        Buf::Owned(v) => spare::give(v),
        Buf::Shared(r) => {
            if let Ok(v) = Rc::try_unwrap(r) {
                spare::give(v);
            }
        }
    }
}

/// Tests every request at once (lets MPI progress them).
pub(crate) fn test_all(reqs: &mut [Pending]) {
    if reqs.iter().all(Pending::done) {
        return;
    }
    // One MPI_Testsome over all of them: one pass of the progress engine (a poll of every
    // socket), where testing them one by one would make a pass each.
    let mut raw: Vec<ffi::MPI_Request> = reqs.iter().map(|p| p.req).collect();
    let mut outcount: c_int = 0;
    let mut indices: Vec<c_int> = vec![0; raw.len()];
    let mut statuses: Vec<MaybeUninit<ffi::MPI_Status>> = (0..raw.len()).map(|_| MaybeUninit::uninit()).collect();
    // SAFETY: `raw` holds active or null requests of this process; `indices` and
    // `statuses` have room for every one of them.
    let rc = unsafe { ffi::MPI_Testsome(count(raw.len()), raw.as_mut_ptr(), &mut outcount, indices.as_mut_ptr(), statuses.as_mut_ptr().cast()) };
    checked(rc, "MPI_Testsome");
    if outcount == ffi::MPI_UNDEFINED {
        return;
    }
    for (k, &i) in indices.iter().take(outcount.max(0) as usize).enumerate() {
        let i = i as usize;
        // SAFETY: Testsome filled the status of each completed request, in order.
        reqs[i].complete(raw[i], unsafe { statuses[k].assume_init_ref() });
    }
}

/// Tests every receive of `recvs` at once and hands each that completed and was not
/// taken yet to `take` (its index, its bytes): a pipeline's progress between two pieces
/// of its own work.
pub(crate) fn take_arrived(recvs: &mut [Pending], mut take: impl FnMut(usize, Vec<u8>)) {
    test_all(recvs);
    for (k, rx) in recvs.iter_mut().enumerate() {
        if !rx.consumed() && rx.done() {
            take(k, rx.take_bytes());
        }
    }
}

/// Waits for every request.
pub(crate) fn wait_all(reqs: &mut [Pending]) {
    reqs.iter_mut().for_each(Pending::wait);
}

/// Waits until one of the requests that were still active completes and returns its
/// index, or `None` if none was active.
pub(crate) fn wait_any(reqs: &mut [Pending]) -> Option<usize> {
    let mut raw: Vec<ffi::MPI_Request> = reqs.iter().map(|p| p.req).collect();
    let mut index: c_int = 0;
    let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
    if let Some(first) = reqs.iter().find(|p| !p.done()) {
        watchdog::waiting(|| format!("any of {} transfers, the first {}", reqs.iter().filter(|p| !p.done()).count(), first.describe()));
    }
    if idle::sleeps() {
        idle::until(|| {
            // Also true when no request is active (the index is then MPI_UNDEFINED).
            let mut done: c_int = 0;
            // SAFETY: `raw` holds active or null requests of this process.
            checked(unsafe { ffi::MPI_Testany(count(raw.len()), raw.as_mut_ptr(), &mut index, &mut done, status.as_mut_ptr()) }, "MPI_Testany");
            done != 0
        });
    } else {
        // SAFETY: as above.
        checked(unsafe { ffi::MPI_Waitany(count(raw.len()), raw.as_mut_ptr(), &mut index, status.as_mut_ptr()) }, "MPI_Waitany");
    }
    if index == ffi::MPI_UNDEFINED || index < 0 {
        return None;
    }
    let i = index as usize;
    // SAFETY: Waitany (or Testany) filled the status of the completed request.
    reqs[i].complete(raw[i], unsafe { status.assume_init_ref() });
    Some(i)
}

/// The messages of one ordered stream from `src` with `tag`, whose count and largest
/// sizes the schedule knows: receives are posted up to [`INBOX_WINDOW`] ahead, so that
/// the next messages arrive (MPI matches them in posting order) while this rank works
/// on the current one, without holding a buffer for every message of the stream.
pub(crate) struct Inbox {
    comm: Comm,
    src: usize,
    tag: i32,
    /// The largest size of each message of the stream, in order.
    capacities: Vec<usize>,
    posted: std::collections::VecDeque<Pending>,
    next_post: usize,
}

/// Receives an [`Inbox`] keeps posted ahead.
pub(crate) const INBOX_WINDOW: usize = 4;

impl Inbox {
    pub fn new(comm: Comm, src: usize, tag: i32, capacities: Vec<usize>) -> Inbox {
        let mut inbox = Inbox { comm, src, tag, capacities, posted: Default::default(), next_post: 0 };
        inbox.top_up();
        inbox
    }

    fn top_up(&mut self) {
        while self.posted.len() < INBOX_WINDOW && self.next_post < self.capacities.len() {
            self.posted.push_back(self.comm.irecv(self.src, self.tag, self.capacities[self.next_post]));
            self.next_post += 1;
        }
    }

    /// The next message of the stream (waits for it), or `None` after the last.
    pub fn next(&mut self) -> Option<Vec<u8>> {
        let bytes = self.posted.pop_front()?.take_bytes();
        self.top_up();
        Some(bytes)
    }

    /// True if the next message has arrived (lets MPI progress it).
    pub fn ready(&mut self) -> bool {
        self.posted.front_mut().is_some_and(Pending::test)
    }

    /// Lets MPI progress the posted receives.
    pub fn poll(&mut self) {
        test_all(self.posted.make_contiguous());
    }
}
