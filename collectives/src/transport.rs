//! Byte messages over a communicator: blocking and non-blocking sends and receives of
//! buffers the request owns, and the few small control collectives the algorithms need.
//!
//! rsmpi ties a non-blocking request to a borrowed buffer through scopes; the pipelined
//! algorithms keep a changing set of requests whose buffers are created on the fly, so
//! this module owns each buffer inside its request instead. All `unsafe` MPI calls of
//! the crate's algorithms are here.

use std::mem::MaybeUninit;
use std::os::raw::c_int;
use std::rc::Rc;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

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

/// A communicator handle with its rank and size, copied into every algorithm.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comm {
    raw: ffi::MPI_Comm,
    pub rank: usize,
    pub size: usize,
}

fn count(len: usize) -> c_int {
    // Call-level argument checks keep every message below the MPI count limit.
    c_int::try_from(len).expect("message longer than MPI's count limit")
}

fn byte_type() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

fn u64_type() -> ffi::MPI_Datatype {
    u64::equivalent_datatype().as_raw()
}

fn received_len(status: &ffi::MPI_Status) -> usize {
    let mut n: c_int = 0;
    // SAFETY: `status` was filled by a completed receive.
    unsafe { ffi::MPI_Get_count(status, byte_type(), &mut n) };
    n as usize
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
        // SAFETY: the buffer is valid for `bytes.len()` bytes for the whole call.
        unsafe { ffi::MPI_Send(bytes.as_ptr().cast(), count(bytes.len()), byte_type(), dest as c_int, tag, self.raw) };
    }

    /// Receives the next message from `src` with `tag`, whatever its length.
    pub fn recv(&self, src: usize, tag: i32) -> Vec<u8> {
        let mut msg = MaybeUninit::<ffi::MPI_Message>::uninit();
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: Mprobe fills `msg` and `status`; Mrecv writes at most the probed length.
        unsafe {
            ffi::MPI_Mprobe(src as c_int, tag, self.raw, msg.as_mut_ptr(), status.as_mut_ptr());
            let mut buf = vec![0u8; received_len(status.assume_init_ref())];
            ffi::MPI_Mrecv(buf.as_mut_ptr().cast(), count(buf.len()), byte_type(), msg.as_mut_ptr(), status.as_mut_ptr());
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
        unsafe { ffi::MPI_Isend(bytes.as_ptr().cast(), count(bytes.len()), byte_type(), dest as c_int, tag, self.raw, &mut req) };
        Pending { req, buf, received: None, consumed: false }
    }

    /// Starts receiving a message of at most `capacity` bytes from `src`.
    pub fn irecv(&self, src: usize, tag: i32, capacity: usize) -> Pending {
        let mut vec = vec![0u8; capacity];
        let mut req = null_request();
        // SAFETY: as for `isend`; the buffer is written only by MPI until completion.
        unsafe { ffi::MPI_Irecv(vec.as_mut_ptr().cast(), count(capacity), byte_type(), src as c_int, tag, self.raw, &mut req) };
        Pending { req, buf: Buf::Owned(vec), received: None, consumed: false }
    }

    /// Element-wise minimum of `words` over all ranks, in place.
    pub fn allreduce_min_u64(&self, words: &mut [u64]) {
        let send = words.to_vec();
        // SAFETY: both buffers hold `words.len()` u64.
        unsafe {
            ffi::MPI_Allreduce(
                send.as_ptr().cast(),
                words.as_mut_ptr().cast(),
                count(words.len()),
                u64_type(),
                ffi::RSMPI_MIN,
                self.raw,
            )
        };
    }

    /// Every rank's `value`, by rank.
    pub fn allgather_u64(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.size];
        // SAFETY: one u64 sent, `size` received.
        unsafe { ffi::MPI_Allgather((&value as *const u64).cast(), 1, u64_type(), all.as_mut_ptr().cast(), 1, u64_type(), self.raw) };
        all
    }

    /// `send[r]` goes to rank r; returns what every rank sent here, by rank.
    pub fn alltoall_u64(&self, send: &[u64]) -> Vec<u64> {
        assert_eq!(send.len(), self.size);
        let mut recv = vec![0u64; self.size];
        // SAFETY: `size` u64 on both sides.
        unsafe { ffi::MPI_Alltoall(send.as_ptr().cast(), 1, u64_type(), recv.as_mut_ptr().cast(), 1, u64_type(), self.raw) };
        recv
    }
}

fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an extern constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// The buffer of a request: owned, or shared between several sends of the same bytes.
pub(crate) enum Buf {
    Owned(Vec<u8>),
    Shared(Rc<[u8]>),
}

impl Buf {
    fn bytes(&self) -> &[u8] {
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

impl From<Rc<[u8]>> for Buf {
    fn from(r: Rc<[u8]>) -> Self {
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
        unsafe { ffi::MPI_Test(&mut self.req, &mut flag, status.as_mut_ptr()) };
        if flag != 0 {
            // SAFETY: a completed test fills the status.
            self.received = Some(received_len(unsafe { status.assume_init_ref() }));
        }
        flag != 0
    }

    /// Waits for completion.
    pub fn wait(&mut self) {
        if !self.done() {
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: as for `test`.
            unsafe { ffi::MPI_Wait(&mut self.req, status.as_mut_ptr()) };
            self.received = Some(received_len(unsafe { status.assume_init_ref() }));
        }
    }

    fn done(&self) -> bool {
        self.req == null_request()
    }

    /// The bytes a receive got (waits for it first); leaves the request consumed.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        self.wait();
        let n = self.received.unwrap_or(0);
        self.consumed = true;
        match std::mem::replace(&mut self.buf, Buf::Owned(Vec::new())) {
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
        if !self.done() {
            // Dropped while MPI may still touch the buffer (only on a panic path): let the
            // request finish on its own and leak the buffer rather than free it under MPI.
            // SAFETY: `req` is active; freeing it is allowed, the buffer stays valid.
            unsafe { ffi::MPI_Request_free(&mut self.req) };
            std::mem::forget(std::mem::replace(&mut self.buf, Buf::Owned(Vec::new())));
        }
    }
}

/// Tests every request once (lets MPI progress them).
pub(crate) fn test_all(reqs: &mut [Pending]) {
    for r in reqs {
        r.test();
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
    // SAFETY: `raw` holds active or null requests of this process.
    unsafe { ffi::MPI_Waitany(count(raw.len()), raw.as_mut_ptr(), &mut index, status.as_mut_ptr()) };
    if index == ffi::MPI_UNDEFINED || index < 0 {
        return None;
    }
    let i = index as usize;
    reqs[i].req = raw[i];
    // SAFETY: Waitany filled the status of the completed request.
    reqs[i].received = Some(received_len(unsafe { status.assume_init_ref() }));
    Some(i)
}
