//! The cost model: LogGP-style predicted time of every algorithm of every operation.
//!
//! Pure functions of sizes, ranks, link and codec speeds (no MPI calls): the automatic
//! selection ([`crate::config::select`]) ranks the candidate algorithms with them, and
//! `cargo xtask model` validates and extrapolates them (see docs/cost-model.md).
//!
//! A message of `b` bytes costs `alpha + b / B` (per-message latency plus bytes over
//! the link's payload rate), or `b / (B e)` while the other direction of the link is busy
//! too (`e`: the duplex efficiency); a codec pass over `b` uncompressed bytes costs a
//! fixed `codec_call_s` plus `b / theta` at the codec's throughput, divided by the core
//! share a rank gets when several ranks compute on one host at once; a reduction costs
//! `b / R`, writing `b` bytes of memory the call allocated itself `b / F`. Compressed messages
//! carry `b / rho` bytes. The algorithms are written as their critical paths: the time
//! until the last rank is done. Plain MPI is priced as the algorithm Open MPI 4.1's
//! `tuned` component picks for large messages ([`mpi_time_s`]).

use crate::{Algorithm, CollOp};

/// glibc's largest mmap threshold on 64-bit systems (`DEFAULT_MMAP_THRESHOLD_MAX`, 32
/// MiB): a freed mapped buffer below it raises the threshold to its size, so later
/// allocations of that size come from the heap, mapped already.
pub const GLIBC_MMAP_THRESHOLD_MAX: f64 = (32u64 << 20) as f64;

/// Most bytes of the value buffer a host thread keeps from one call to the next
/// (`spare`), the subtree buffers of CPR-P2P's trees.
pub const KEPT_VALUE_BYTES: f64 = crate::spare::MAX_VALUE_BYTES as f64;

/// Pieces of a message's values a [`Profile`] describes: as many as the automatic
/// chunking makes of a large message.
pub const PROFILE_PIECES: usize = crate::config::MAX_AUTO_CHUNKS;

/// How a message's compressed bytes and codec work spread over its values: the share of
/// each in each of [`PROFILE_PIECES`] equal pieces, in order (each array sums to 1). A
/// field whose values turn constant towards its end puts nearly all its bytes in its
/// first pieces, while decoding the constant rest still writes every value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    pub bytes: [f64; PROFILE_PIECES],
    pub comp: [f64; PROFILE_PIECES],
    pub decomp: [f64; PROFILE_PIECES],
}

impl Profile {
    /// Bytes and work in proportion to the values.
    pub const UNIFORM: Profile = {
        let even = [1.0 / PROFILE_PIECES as f64; PROFILE_PIECES];
        Profile { bytes: even, comp: even, decomp: even }
    };

    /// The (bytes, compression, decompression) shares of chunk `i` of `k` equal chunks
    /// (each piece's share spread evenly over its values).
    fn chunk(&self, i: usize, k: usize) -> (f64, f64, f64) {
        self.span(i as f64 / k as f64, (i + 1) as f64 / k as f64)
    }

    /// The same shares of the values from fraction `lo` to `hi` of the message.
    fn span(&self, lo: f64, hi: f64) -> (f64, f64, f64) {
        let n = PROFILE_PIECES as f64;
        let over = |shares: &[f64; PROFILE_PIECES]| {
            (0..PROFILE_PIECES).map(|j| shares[j] * ((hi.min((j + 1) as f64 / n) - lo.max(j as f64 / n)).max(0.0) * n)).sum::<f64>()
        };
        (over(&self.bytes), over(&self.comp), over(&self.decomp))
    }
}

/// Machine, network and codec parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub ranks: usize,
    /// Payload bytes per second of one direction of a node's link.
    pub link_bytes_per_s: f64,
    /// Share of `link_bytes_per_s` each direction of a link gets while the other direction
    /// carries bulk data too, one flow each way (1 on a full-duplex network; TCP over the
    /// emulated links gets about half: acknowledgements queue behind the data). `k` flows
    /// each way get `1 - (1 - e) / k`.
    pub duplex_efficiency: f64,
    /// The same for a stream of pipeline chunks (C-Coll's rings and Alltoall: one
    /// message per chunk, sent as each is made, one flow each way), which keeps its
    /// link busier both ways than a few large messages do.
    pub chunk_duplex_efficiency: f64,
    /// Per-message cost: one-way latency plus software overhead, seconds.
    pub alpha_s: f64,
    /// Bytes a link passes at once after it has been idle long enough (a token-bucket
    /// shaper's depth, as on the emulated links): a whole message sent after a pause
    /// (CPR-P2P's, which follow a compression) pays only for the rest at the link's
    /// rate. 0 on a real network.
    pub link_burst_bytes: f64,
    /// Largest message that leaves as soon as it is posted (MPI's eager protocol; Open
    /// MPI's TCP transport writes it to the socket at once). A larger one waits for the
    /// receiver's reply (rendezvous) and moves only while its sender is inside MPI, so a
    /// tree parent that compresses for its next child before waiting holds it back.
    pub eager_bytes: f64,
    /// Codec throughputs in uncompressed bytes per second (what one rank's codec does).
    pub comp_bytes_per_s: f64,
    pub decomp_bytes_per_s: f64,
    /// Fixed cost of one codec pass, seconds (thread dispatch, or a kernel launch).
    pub codec_call_s: f64,
    /// Element-wise reduction throughput (bytes of one operand per second).
    pub reduce_bytes_per_s: f64,
    /// Bytes per second of writing freshly allocated memory (the kernel maps and zeroes
    /// each page on first touch): only the buffers a call allocates itself (the work
    /// buffer of reduce-scatter and reduce, recursive doubling's decode scratch, the
    /// subtree buffers of CPR-P2P's tree Scatter and Gather larger than
    /// [`Params::kept_subtree_bytes`]). The
    /// caller's buffers are taken as mapped already (ccoll-bench reuses them, as
    /// applications do). Infinity: free.
    pub fresh_bytes_per_s: f64,
    /// Bytes per second of freeing such a buffer (the kernel unmaps its pages), priced
    /// where the call's last rank frees its buffers as it returns (the other ranks'
    /// frees run while it works, as their polling would). Infinity: free.
    pub unmap_bytes_per_s: f64,
    /// Allocations smaller than this reuse memory the process freed before (a previous
    /// call's buffers) and cost [`Params::reused_bytes_per_s`] instead: glibc's malloc
    /// serves them from its heap once it has freed one such mapped buffer (its mmap
    /// threshold rises to the freed size, up to [`GLIBC_MMAP_THRESHOLD_MAX`]). 0: every
    /// allocation is fresh.
    pub heap_reuse_below_bytes: f64,
    /// Bytes per second of writing a zeroed allocation that reuses freed memory (calloc
    /// clears it: no page faults). Infinity: free.
    pub reused_bytes_per_s: f64,
    /// A subtree buffer of CPR-P2P's tree Scatter and Gather up to this size (bytes) is
    /// the one the rank's thread kept from its previous call ([`KEPT_VALUE_BYTES`] on
    /// the host): mapped, and not cleared, so free to write. A larger one is priced as
    /// fresh. 0: none kept (device memory, which keeps none).
    pub kept_subtree_bytes: f64,
    /// Bytes per second of copying values between mapped buffers (a rank's own block
    /// from the caller's input to its output in Scatter and Alltoall, CPR-P2P's blocks
    /// out of its subtree buffers). Infinity: free.
    pub copy_bytes_per_s: f64,
    /// Bytes per second of the pass over a rank's input that finds its finite value
    /// range, which a relative error bound needs before anything is compressed (infinity:
    /// an absolute bound, no pass).
    pub scan_bytes_per_s: f64,
    /// CPU seconds the network costs per byte a rank compresses or decodes (0: not
    /// priced): the kernel's TCP path and the MPI library's copies of the compressed
    /// bytes it sends or receives, run on the host's cores beside the codec work, free of
    /// contention like writes to fresh memory. That is the cost per byte on the wire over
    /// the call's mean ratio, not the pacing one: the host's cores carry every rank's
    /// traffic. Charged with the codec pass that makes or takes the bytes (a compression
    /// sends its output, a decode takes what arrived; a chunk forwarded unchanged is not
    /// counted).
    pub net_cpu_s_per_coded_byte: f64,
    /// Compressing values the codec decoded itself (CPR-P2P's inner ranks and ring
    /// steps compress what they received again), uncompressed bytes per second; `None`:
    /// as fast as [`Params::comp_bytes_per_s`].
    pub recomp_bytes_per_s: Option<f64>,
    /// Reducing two compressed streams into one without decoding (`cdr`), uncompressed
    /// bytes of one operand per second; `None`: not known, `cdr` is not priced.
    pub domain_reduce_bytes_per_s: Option<f64>,
    /// Compression ratio (uncompressed / compressed): of the messages that pace the call
    /// (see [`pacing_ratio`]).
    pub ratio: f64,
    /// How the broadcast vector's bytes and codec work spread over its chunks (C-Coll's
    /// Bcast, whose receivers decode each chunk as it arrives).
    pub profile: Profile,
    /// The same for a Scatter root's whole input, every rank's block in rank order: a
    /// field's blocks differ (rtm's last one compresses about five times as far as the
    /// root's three together), and CPR-P2P's deepest path carries the last ones.
    pub scatter_input: Profile,
    /// Slowdown of the passes a rank runs itself (codec, reduction, range scan) while
    /// several ranks of a host compute at once, against the same work alone (shared
    /// caches and memory bandwidth, caches refilled after each time slice): 1 for a rank
    /// with a node of its own. Not charged to a rank computing among polling ones (the
    /// Bcast and Scatter roots used the same CPU time for the same work with one rank
    /// per core as with four ranks on two cores), nor to writing fresh memory (four
    /// processes doing it on two cores took the perfectly shared time): see
    /// docs/cost-model.md.
    pub contention: f64,
    /// Each other rank's codec work where all ranks code at once, as a fraction of the
    /// priced rank's (1: the same; an Alltoall's heaviest sender compresses more than
    /// the others, priced at its own ratio, [`pacing_ratio`]). The lighter ranks finish
    /// first and sleep, and the priced rank does the rest of its work with a core to
    /// itself: see [`Params::codec_share`].
    pub peer_work: f64,
    /// Cores of one host and the ranks placed on it: ranks computing at once share them.
    pub host_cores: f64,
    pub ranks_per_host: usize,
    /// Threads each rank's codec, reduction and buffer passes run on (the codec speeds
    /// above are one thread's): a computing rank has this many runnable threads, a
    /// polling one a single thread, and the host's scheduler shares its cores among
    /// all runnable threads alike.
    pub codec_threads: f64,
    /// Runnable threads of other work on the host (its load average), which take their
    /// share of the cores too.
    pub background_load: f64,
    /// Ranks that wait for a message keep polling (Open MPI's TCP progress loop does), so
    /// every rank of a host competes for its cores for the whole call, not only while
    /// it computes. Not for the compressed trees (Bcast, Scatter), whose ranks are priced
    /// by who runs beside them (`Load::Beside`).
    pub busy_wait: bool,
    /// How far a rank done with the call and polling holds a core of its own against the
    /// ranks that compute beside it (`Load::Beside`): 1, it keeps a whole core while
    /// cores are spare and the computing ranks share the rest (traced on a Xeon); 0, the
    /// scheduler shares the cores among computing and polling ranks alike (each rank in
    /// a session of its own, Zen 4, kernel 6.18); in between, the share between the
    /// two. Measured by the calibration (docs/cost-model.md).
    pub poller_hold: f64,
    /// The host scheduler's time slice: how long a runnable thread keeps a core before
    /// another one waiting for it gets its turn (0: not priced). A polling rank that
    /// finds its message is on its core already, so the passes it then runs back to back
    /// (a burst) first finish the rest of its slice, half a slice on average, at a whole
    /// core's speed, and share the core only after that: what a rank sharing its core
    /// gains on every burst of whole-message work (CPR-P2P's) and every step of C-Coll's
    /// reduce-scatter, each of which starts on an arrival.
    pub slice_s: f64,
    /// Ranks per node group of the hierarchical allreduce (1: every rank its own group),
    /// and the link between the ranks of one group (shared memory).
    pub group_ranks: usize,
    pub intra_bytes_per_s: f64,
    pub intra_alpha_s: f64,
}

impl Params {
    /// One rank per host with a core of its own on a full-duplex network, allocations
    /// free, nothing else running; no link, codec or reduction figures yet (1 byte/s).
    pub const IDEAL: Params = Params {
        ranks: 1,
        link_bytes_per_s: 1.0,
        duplex_efficiency: 1.0,
        chunk_duplex_efficiency: 1.0,
        alpha_s: 0.0,
        link_burst_bytes: 0.0,
        eager_bytes: f64::INFINITY,
        comp_bytes_per_s: 1.0,
        decomp_bytes_per_s: 1.0,
        codec_call_s: 0.0,
        reduce_bytes_per_s: 1.0,
        fresh_bytes_per_s: f64::INFINITY,
        unmap_bytes_per_s: f64::INFINITY,
        heap_reuse_below_bytes: 0.0,
        reused_bytes_per_s: f64::INFINITY,
        kept_subtree_bytes: 0.0,
        copy_bytes_per_s: f64::INFINITY,
        scan_bytes_per_s: f64::INFINITY,
        net_cpu_s_per_coded_byte: 0.0,
        recomp_bytes_per_s: None,
        domain_reduce_bytes_per_s: None,
        ratio: 1.0,
        profile: Profile::UNIFORM,
        scatter_input: Profile::UNIFORM,
        contention: 1.0,
        peer_work: 1.0,
        host_cores: 1.0,
        ranks_per_host: 1,
        codec_threads: 1.0,
        background_load: 0.0,
        busy_wait: false,
        poller_hold: 1.0,
        slice_s: 0.0,
        group_ranks: 1,
        intra_bytes_per_s: f64::INFINITY,
        intra_alpha_s: 0.0,
    };

    /// Cores one rank's pass gets (in units of the one-thread speeds) under `load`: the
    /// scheduler shares the cores among the runnable threads, `codec_threads` of each
    /// computing rank, one of each other runnable rank and the background load; a rank
    /// never gets more than its threads.
    fn cores(&self, load: impl Into<Load>) -> f64 {
        let ranks = self.ranks_per_host.max(1);
        let threads = self.codec_threads.max(1.0);
        let background = self.background_load.max(0.0);
        let share = match load.into() {
            Load::Computing(active) => {
                let computing = active.clamp(1, ranks);
                let polling = if self.busy_wait { (ranks - computing) as f64 } else { 0.0 };
                self.host_cores * threads / (threads * computing as f64 + polling + background)
            }
            Load::Beside { computing, polling } => {
                // The host's share of the communicator's other ranks.
                let here = (ranks - 1) as f64 / (self.ranks.max(2) - 1) as f64;
                let (computing, polling) = (threads * (1.0 + computing.max(0.0) * here), polling.max(0.0) * here);
                let alike = self.host_cores * threads / (computing + polling + background);
                if polling + 1.0 <= self.host_cores {
                    let kept = (self.host_cores - polling) * threads / (computing + background);
                    let hold = self.poller_hold.clamp(0.0, 1.0);
                    hold * kept.min(threads) + (1.0 - hold) * alike.min(threads)
                } else {
                    alike
                }
            }
        };
        share.min(threads)
    }

    /// The cores a rank computing beside `computing` other computing ranks and `polling`
    /// polling ones gets ([`Load::Beside`]): what the calibration's probe of
    /// [`Params::poller_hold`] compares its measurement with.
    pub fn beside_share(&self, computing: f64, polling: f64) -> f64 {
        self.cores(Load::Beside { computing, polling })
    }

    /// [`Params::cores`] for the passes that run in the rank itself (codec, reduction,
    /// range scan), less the contention where several ranks of the host compute at once
    /// (not beside runnable ranks that only poll, [`Load::Beside`]).
    fn share(&self, load: impl Into<Load>) -> f64 {
        let load = load.into();
        self.cores(load) / if self.several_compute(load) { self.contention.max(1.0) } else { 1.0 }
    }

    /// Whether `load` has several ranks of the host computing at once.
    fn several_compute(&self, load: Load) -> bool {
        matches!(load, Load::Computing(active) if active.clamp(1, self.ranks_per_host.max(1)) > 1)
    }

    /// [`Params::share`] for a codec pass where ranks with less codec work
    /// ([`Params::peer_work`]) compute beside it: all share the cores until the others
    /// are done, the fraction `peer_work` of this rank's pass, then the rest runs as if
    /// alone (they wait sleeping, `CCOLL_WAIT`).
    fn codec_share(&self, load: impl Into<Load>) -> f64 {
        let load = load.into();
        let w = self.peer_work.clamp(0.0, 1.0);
        if w < 1.0 && self.several_compute(load) {
            1.0 / (w / self.share(load) + (1.0 - w) / self.share(ALONE))
        } else {
            self.share(load)
        }
    }

    /// The same parameters on a link of `bits_per_s` (payload efficiency kept).
    pub fn with_link_bits(&self, bits_per_s: f64, efficiency: f64) -> Params {
        Params { link_bytes_per_s: bits_per_s / 8.0 * efficiency, ..*self }
    }

    /// Node groups of `group_ranks` ranks (the last one may be smaller): how many, and
    /// the ranks of the largest.
    pub fn groups(&self) -> (usize, usize) {
        let g = self.group_ranks.clamp(1, self.ranks.max(1));
        (self.ranks.max(1).div_ceil(g), g)
    }
}

/// Who runs beside a rank's pass on its host.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Load {
    /// This many ranks (the rank among them) compute at once; the host's others wait,
    /// polling where [`Params::busy_wait`] says so.
    Computing(usize),
    /// The rank computes beside `computing` other ranks of the communicator that compute
    /// too and `polling` ones that are done with the call and poll in the caller's next
    /// one (ccoll-bench's `MPI_Barrier`), each counted in the host's proportion; the
    /// rest wait for their messages, sleeping (`CCOLL_WAIT`), and are not counted. A
    /// polling rank is never idle: where the scheduler places the ranks that wake on the
    /// other cores, it keeps a core of its own while there are cores to spare, and the
    /// computing ranks share what is left; where it shares the cores among all
    /// runnable ranks alike, it takes a computing rank's share. With none to spare, all
    /// share alike either way. [`Params::poller_hold`] says which, or how far between.
    /// Traced (`perf sched`, CPR-P2P Bcast at 64 MiB on the emulated cluster, a Xeon,
    /// 2026-11-29): the root, done first, kept one of the two cores for ~95% of the
    /// run while the three others took turns on the other.
    Beside { computing: f64, polling: f64 },
}

impl From<usize> for Load {
    fn from(active: usize) -> Load {
        Load::Computing(active)
    }
}

/// Cost terms for one parameter set.
struct Terms<'a> {
    p: &'a Params,
}

impl Terms<'_> {
    /// A message while the link's other direction is idle.
    fn msg(&self, b: f64) -> f64 {
        self.p.alpha_s + self.wire_rested(b)
    }
    /// The bytes of a message on a link that was idle for `pause_s` before it: what its
    /// token bucket refilled meanwhile passes at once, the rest at the link's rate.
    fn wire_after(&self, b: f64, pause_s: f64) -> f64 {
        self.after_burst(b, pause_s) / self.p.link_bytes_per_s
    }
    fn after_burst(&self, b: f64, pause_s: f64) -> f64 {
        let refilled = (pause_s * self.p.link_bytes_per_s).min(self.p.link_burst_bytes);
        (b - refilled).max(0.0)
    }
    /// The bytes of a stream that starts the call on a link idle before it (between
    /// calls): all but what its full bucket passes at once. A chunk stream keeps its link
    /// busy after that, so only its start is credited.
    fn after_rest(&self, b: f64) -> f64 {
        self.after_burst(b, f64::INFINITY)
    }
    /// [`Terms::after_rest`] at the link's rate.
    fn wire_rested(&self, b: f64) -> f64 {
        self.after_rest(b) / self.p.link_bytes_per_s
    }
    /// A message while the other direction carries `flows` flows of bulk data (sent
    /// right after the one before: no burst).
    fn duplex(&self, b: f64, flows: f64) -> f64 {
        self.p.alpha_s + self.wire_duplex(b, flows)
    }
    /// The bytes of [`Terms::duplex`] without the per-message cost.
    fn wire_duplex(&self, b: f64, flows: f64) -> f64 {
        let e = 1.0 - (1.0 - self.p.duplex_efficiency.clamp(1e-3, 1.0)) / flows.max(1.0);
        b / (self.p.link_bytes_per_s * e)
    }
    /// The bytes of a chunk stream while the link's other direction carries one too.
    fn wire_chunks(&self, b: f64) -> f64 {
        b / (self.p.link_bytes_per_s * self.p.chunk_duplex_efficiency.clamp(1e-3, 1.0))
    }
    /// `b` bytes compressed, sent after the link idled for `pause_s` (the sender's codec
    /// work), with the reverse direction idle (`cmsg`) or carrying one flow (`cduplex`).
    fn cmsg(&self, b: f64, pause_s: f64) -> f64 {
        self.p.alpha_s + self.wire_after(b / self.p.ratio, pause_s)
    }
    fn cduplex(&self, b: f64, pause_s: f64) -> f64 {
        self.p.alpha_s + self.wire_duplex(self.after_burst(b / self.p.ratio, pause_s), 1.0)
    }
    fn comp(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        self.p.codec_call_s + b / (self.p.comp_bytes_per_s * self.p.codec_share(load)) + self.net(b, load)
    }
    /// Compressing `b` bytes of values the codec decoded itself.
    fn recomp(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        let rate = self.p.recomp_bytes_per_s.unwrap_or(self.p.comp_bytes_per_s);
        self.p.codec_call_s + b / (rate * self.p.codec_share(load)) + self.net(b, load)
    }
    fn decomp(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        self.p.codec_call_s + b / (self.p.decomp_bytes_per_s * self.p.codec_share(load)) + self.net(b, load)
    }
    /// Sending or receiving the compressed form of `b` bytes: the rank's own thread, on
    /// its share of the cores.
    fn net(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        b * self.p.net_cpu_s_per_coded_byte * self.p.codec_threads.max(1.0) / self.p.cores(load)
    }
    fn reduce(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        b / (self.p.reduce_bytes_per_s * self.p.share(load))
    }
    /// Writing `b` bytes of a buffer of `alloc` bytes the call allocated: the kernel maps
    /// and zeroes the pages (no contention, [`Params::contention`]), unless the buffer
    /// is small enough to reuse freed heap memory.
    fn fresh(&self, b: f64, alloc: f64, load: impl Into<Load>) -> f64 {
        let rate = if self.reuses_heap(alloc) { self.p.reused_bytes_per_s } else { self.p.fresh_bytes_per_s };
        b / (rate * self.p.cores(load))
    }
    /// Writing `b` bytes of a CPR-P2P tree's subtree buffer of `alloc` bytes: free in
    /// the buffer the thread kept ([`Params::kept_subtree_bytes`]), else fresh.
    fn subtree(&self, b: f64, alloc: f64, load: impl Into<Load>) -> f64 {
        if alloc <= self.p.kept_subtree_bytes { 0.0 } else { self.fresh(b, alloc, load) }
    }
    /// Freeing a buffer of `alloc` bytes the call allocated, `b` of them written: the
    /// kernel unmaps the pages it mapped, unless the buffer came from the heap.
    fn unmap(&self, b: f64, alloc: f64, load: impl Into<Load>) -> f64 {
        if self.reuses_heap(alloc) { 0.0 } else { b / (self.p.unmap_bytes_per_s * self.p.cores(load)) }
    }
    /// Whether glibc serves an allocation of `alloc` bytes from memory an earlier call
    /// freed ([`Params::heap_reuse_below_bytes`]) rather than mapping it afresh.
    fn reuses_heap(&self, alloc: f64) -> bool {
        alloc < self.p.heap_reuse_below_bytes
    }
    /// The range pass and copies run on the rank's own thread alone: a thread's share.
    fn scan(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        b / (self.p.scan_bytes_per_s * self.thread_share(load))
    }
    fn copy(&self, b: f64, load: impl Into<Load> + Copy) -> f64 {
        b / (self.p.copy_bytes_per_s * self.thread_share(load))
    }
    /// A burst of passes that take `w` seconds at the rank's share of the cores under
    /// `load`, started as a message arrived or the call began: its first half slice
    /// ([`Params::slice_s`]) runs at a whole thread's speed.
    fn burst(&self, w: f64, load: impl Into<Load> + Copy) -> f64 {
        let f = self.thread_share(load);
        let head = self.p.slice_s / 2.0;
        if f >= 1.0 || head <= 0.0 {
            return w;
        }
        let alone = w * f;
        if alone <= head { alone } else { w - head * (1.0 / f - 1.0) }
    }
    fn thread_share(&self, load: impl Into<Load>) -> f64 {
        self.p.share(load) / self.p.codec_threads.max(1.0)
    }
    /// A message inside a node group.
    fn intra(&self, b: f64) -> f64 {
        self.p.intra_alpha_s + b / self.p.intra_bytes_per_s
    }
}

/// Predicted seconds of `algo` running `op` on `bytes`, or `None` where the algorithm
/// does not implement the operation. `bytes` is what the selection looks at: the vector
/// each rank contributes for the reductions, Bcast and point-to-point, the piece each
/// rank receives for Scatter (sends for Gather), the contribution of each rank for
/// Allgather, and the block for each destination for Alltoall. Hierarchical is priced
/// with its compressed ring among the group leaders ([`hier_host_time_s`]: the
/// uncompressed path).
pub fn time_s(op: CollOp, algo: Algorithm, bytes: f64, p: &Params) -> Option<f64> {
    if algo == Algorithm::Auto || !algo.applies_to(op) {
        return None;
    }
    let t = Terms { p };
    let np = p.ranks.max(1);
    if np == 1 && op != CollOp::P2p {
        return Some(0.0);
    }
    if algo == Algorithm::Mpi {
        return Some(mpi_time_s(op, bytes, p));
    }
    let n = np as f64;
    let all = np;
    let levels = n.log2().ceil();
    let steps = n - 1.0;
    // CPR-P2P's ring reduce-scatter on blocks of b = bytes / p, out of place: each step
    // compresses the outgoing block (the input's in the first step), decodes the
    // incoming partial block straight into the work buffer and reduces the input's block
    // into it (no scratch, no copy of the input), while both directions of every link
    // carry the ring's traffic. `fresh`: the call allocated the work buffer itself
    // (reduce-scatter and reduce: `start_with_work`), so each step's decode is the first
    // write to its block's pages; the Allreduce works in the caller's output.
    let b = bytes / n;
    let rs_work = |fresh: bool| (if fresh { t.fresh(b, bytes, all) } else { 0.0 }) + t.comp(b, all) + t.decomp(b, all) + t.reduce(b, all);
    // Each step's message leaves after the step's codec work, the link idle meanwhile.
    // CPR-P2P's step messages (a few MB, each after codec work) cross at the link's
    // one-way rate: traced, the heaviest did (CPR-P2P's rings), and the duplex rate of
    // long two-way transfers over-priced them (see docs/cost-model.md). A step's work
    // (decoding and reducing the arrival, compressing the next block) is one burst.
    let rs_cpr = |fresh: bool| {
        let work = t.burst(rs_work(fresh), all);
        steps * (work + t.cmsg(b, work))
    };
    // Compress-once ring allgather of whole blocks of m (the ring allreduce's): own block
    // compressed (and decoded, so that every rank holds the same values), forwarded
    // p - 1 times, decoded at the end.
    let ag_once = |m: f64, own_decoded: bool| {
        t.comp(m, all) + if own_decoded { t.decomp(m, all) } else { 0.0 } + steps * t.cduplex(m, 0.0) + t.decomp(steps * m, all)
    };
    // CPR-P2P's ring allgather: the first step compresses the rank's own block, every
    // later one the block it decoded in the step before (decoding and compressing it
    // again: one burst); each step's heaviest block crosses at the one-way rate, as the
    // reduce-scatter's messages do.
    let ag_cpr = |m: f64| {
        let relay = t.burst(t.decomp(m, all) + t.recomp(m, all), all);
        t.burst(t.comp(m, all), all) + (steps - 1.0) * relay + t.burst(t.decomp(m, all), all) + steps * t.cmsg(m, relay)
    };
    // C-Coll's streams to every peer at once, destinations in turn (one flow each way),
    // pieces of `m` for each: every chunk sent as soon as it is compressed and the
    // arrivals decoded (and with `reduce` added into the own block) between the later
    // compressions, so after the first chunk the transfers run beside the rest of the
    // codec work, and the last chunk's decode is left after them. The Alltoall, and the
    // direct reduce-scatter of C-Coll's Allreduce, Reduce-scatter and Reduce
    // (collectives/src/alg/direct.rs).
    let stream = |m: f64, reduce: bool| {
        let c = m / chunks(m);
        let rest = steps * m - c;
        let absorb = |x: f64| t.decomp(x, all) + if reduce { t.reduce(x, all) } else { 0.0 };
        let transfers = steps * p.alpha_s + t.wire_chunks(t.after_rest(steps * m / p.ratio));
        t.comp(c, all) + transfers.max(t.comp(rest, all) + absorb(rest)) + absorb(c)
    };
    // C-Coll's Reduce-scatter and Reduce: that stream into the work buffer the call
    // allocated, of which it writes only the own block (its first write: fresh pages).
    let rs_direct = || t.fresh(b, bytes, all) + stream(b, true);
    use Algorithm::*;
    use CollOp::*;
    let time = match (op, algo) {
        // The ring algorithms reduce out of place into the caller's output: no allocation.
        (Allreduce, CprP2p) => rs_cpr(false) + ag_cpr(b),
        (Allreduce, CColl) => stream(b, true) + ring_allgather(&t, b, true),
        (Allreduce, Ring) => {
            // The next receive is posted before compressing: it overlaps the compression.
            steps * (p.alpha_s + t.wire_duplex(b / p.ratio, 1.0).max(t.comp(b, all)) + t.decomp(b, all) + t.reduce(b, all)) + ag_once(b, true)
        }
        (Allreduce, RecursiveDoubling) => {
            // The input is copied into the output (not priced: mapped memory at copy
            // speed); the decode scratch of the whole vector is allocated by the call, its
            // pages first written by the first step's decode, freed at the end.
            let work = t.comp(bytes, all) + t.decomp(bytes, all) + t.reduce(bytes, all);
            let step = work + t.cduplex(bytes, work);
            let pow2 = np.is_power_of_two();
            let rounds = (levels - if pow2 { 0.0 } else { 1.0 }) * step + if pow2 { 0.0 } else { 2.0 * step };
            t.fresh(bytes, bytes, all) + rounds + t.unmap(bytes, bytes, all)
        }
        (Allreduce, Hierarchical) => hier_time_s(bytes, p, CColl),
        (Allreduce, CompressedDomain) => cdr_allreduce(&t, b)?,
        // Every rank frees its work buffer as it returns (C-Coll's: only the own block was
        // mapped, which it copies into the caller's output first).
        (ReduceScatter, CprP2p) => rs_cpr(true) + t.unmap(bytes, bytes, all),
        (ReduceScatter, CColl) => rs_direct() + t.copy(b, all) + t.unmap(b, bytes, all),
        // Reduce = reduce-scatter + gather of the reduced blocks at the root, which
        // decodes them into the caller's output and frees its work buffer last.
        (Reduce, CprP2p) => rs_cpr(true) + steps * (t.cmsg(b, 0.0) + t.burst(t.decomp(b, 1), 1)) + t.comp(b, all) + t.unmap(bytes, bytes, 1),
        (Reduce, CColl) => rs_direct() + t.comp(b, all) + steps * t.cmsg(b, 0.0) + t.decomp(steps * b, 1) + t.unmap(b, bytes, 1),
        (Bcast, CprP2p | CColl) => tree_bcast(&t, bytes, algo == CprP2p),
        (Scatter, CprP2p | CColl) => tree_scatter(&t, bytes, algo == CprP2p),
        (Gather, CprP2p) => {
            // Binomial tree: the leaf compresses its block from the caller's input, every
            // inner rank gathers its subtree's blocks into its subtree buffer, on the
            // deepest branch decoding its largest child's half into it last (the rest of
            // it is written meanwhile), and the root decodes into the caller's output.
            // The branch forwards halves, recompressing per hop: the leaf's own block as
            // it is, every later hop's mostly decoded values again. From the leaf up (hop
            // k carries m bytes, hop 1 into the root): the leaf's compression is a burst,
            // each receiver's decode one with its compression for the hop above, the
            // root's decode the last.
            let mut time = 0.0;
            let mut decoded = 0.0;
            for k in (1..=levels as u32).rev() {
                let m = n * bytes / 2f64.powi(k as i32);
                let code = if k == levels as u32 { t.comp(m, 1) } else { t.recomp(m, 1) };
                time += t.burst(decoded + code, 1) + t.cmsg(m, code);
                decoded = t.decomp(m, 1) + if k > 1 { t.subtree(m, 2.0 * m, 1) } else { 0.0 };
            }
            time + t.burst(decoded, 1)
        }
        (Gather, CColl) => tree_gather(&t, bytes),
        // Allgather and Alltoall: every rank first copies its own block from the caller's
        // input into its output (out of place, as ccoll-bench calls them), all at once.
        (Allgather, CprP2p) => t.copy(bytes, all) + ag_cpr(bytes),
        (Allgather, CColl) => t.copy(bytes, all) + ring_allgather(&t, bytes, false),
        // Alltoall, CPR-P2P: pairwise exchanges, recompressing nothing (each piece is
        // compressed once at its origin) but decoding before the next exchange; the
        // heaviest sender's pieces cross at the one-way rate, as the reduce-scatter's
        // messages do.
        (Alltoall, CprP2p) => {
            let work = t.burst(t.comp(bytes, all) + t.decomp(bytes, all), all);
            t.copy(bytes, all) + steps * (work + t.cmsg(bytes, work))
        }
        (Alltoall, CColl) => t.copy(bytes, all) + stream(bytes, false),
        (P2p, CprP2p) => {
            let comp = t.burst(t.comp(bytes, 1), 1);
            comp + t.cmsg(bytes, comp) + t.burst(t.decomp(bytes, 1), 1)
        }
        // Pipelined chunks: the transfer hides inside the codec work, or the reverse.
        (P2p, CColl) => p.alpha_s + t.wire_rested(bytes / p.ratio).max(t.comp(bytes, 1) + t.decomp(bytes, 1)),
        _ => return None,
    };
    // Before the rounds, the ranks that hold input find its value range (the Bcast and
    // Scatter root alone, with the whole vector or every block).
    let scan = match op {
        Bcast => t.scan(bytes, ALONE),
        Scatter => t.scan(n * bytes, ALONE),
        Alltoall => t.scan(n * bytes, all),
        _ => t.scan(bytes, all),
    };
    Some(scan + time)
}

/// The compression ratios one call reached, as ccoll-bench reports them (equal on
/// uniform data).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratios {
    /// The whole call's: uncompressed over sent bytes, summed over the ranks.
    pub mean: f64,
    /// The heaviest sender's own: the lowest of the ranks' ratios.
    pub heaviest_sender: f64,
    /// A step-by-step schedule's heaviest messages: step `i` being every rank's `i`-th
    /// message, the largest of each step, summed over the steps.
    pub heaviest_steps: f64,
}

/// The ratio that prices `op`'s critical path. In an Alltoall each rank sends only its
/// own blocks, so the rank whose data compresses least compresses longest and its link
/// carries the most, and every destination waits for its pieces: the heaviest sender's.
/// CPR-P2P's rings exchange whole blocks step by step, each step as slow as its heaviest
/// message (the least compressible block crosses every link in turn, and a
/// reduce-scatter's partial sums compress less at every step): the heaviest steps'.
/// C-Coll's Allgather streams chunks without steps: every rank's link carries every
/// block but the next rank's own, so the rank that sends the most sets the pace, the
/// heaviest sender again; so do C-Coll's Allreduce, Reduce-scatter and Reduce, whose
/// direct reduce-scatter streams as an Alltoall does (the Allreduce's allgather is that
/// ring). A Scatter root compresses and sends every other block once, and the call's
/// mean counts again what inner ranks forward (on rtm at 64 MiB a block 125 against the
/// root's 100): the heaviest sender's, the root. Bcast and Gather: the whole call's
/// ratio (every rank forwards the same vector; the root receives every block).
pub fn pacing_ratio(op: CollOp, algo: Algorithm, r: Ratios) -> f64 {
    match (op, algo) {
        (CollOp::Alltoall | CollOp::Scatter, _) | (CollOp::Allgather | CollOp::Allreduce | CollOp::ReduceScatter | CollOp::Reduce, Algorithm::CColl) => {
            r.heaviest_sender.min(r.mean)
        }
        (CollOp::Allreduce | CollOp::Allgather, Algorithm::CprP2p) => r.heaviest_steps.min(r.mean),
        _ => r.mean,
    }
}

/// The `cdr` Allreduce on blocks of `b` bytes, after the scan, or `None` where the
/// compressed-domain reduction's speed is not known. Reduce-scatter: every rank
/// compresses its first outgoing block, then in each of the `p - 1` steps compresses its
/// own piece of the incoming block and reduces it with the arriving partial piece in the
/// compressed domain, sending the result on at once: the codec work of a step against
/// the partial block's transfer (both directions busy). Allgather: the reduced blocks
/// travel compressed, forwarded as they arrive; every rank decodes all `p` (its own
/// first, while the first one arrives), so either the decoding or the link carrying
/// `p - 1` blocks sets the pace, the last chunk decoded after it arrives.
fn cdr_allreduce(t: &Terms, b: f64) -> Option<f64> {
    let p = t.p;
    let rate = p.domain_reduce_bytes_per_s?;
    let all = p.ranks.max(1);
    let steps = all as f64 - 1.0;
    let wire = p.alpha_s + t.wire_duplex(b / p.ratio, 1.0);
    let work = t.comp(b, all) + b / (rate * p.share(all));
    // The first step's transfers start on rested links.
    let first = p.alpha_s + t.wire_duplex(t.after_rest(b / p.ratio), 1.0);
    let reduce_scatter = t.comp(b, all) + first.max(work) + (steps - 1.0) * wire.max(work);
    let decode = t.decomp(b, all);
    let allgather = ((steps + 1.0) * decode).max(steps * wire + t.decomp(b / chunks(b), all));
    Some(reduce_scatter + allgather)
}

/// Pipeline chunks of a message of `bytes`: the collectives' automatic chunking
/// ([`crate::config::pipeline_chunk_values`]: at most 16 chunks of at least 256 KiB).
fn chunks(bytes: f64) -> f64 {
    (bytes / crate::config::MIN_AUTO_CHUNK_BYTES as f64).floor().clamp(1.0, crate::config::MAX_AUTO_CHUNKS as f64)
}

/// A pipeline of `k` chunks through stages whose per-chunk times are `chunk` and whose
/// totals over the whole message are `total`: the first chunk crosses every stage, then
/// the busiest stage sets the pace for the rest.
fn pipeline(chunk: &[f64], total: &[f64]) -> f64 {
    let slowest = chunk.iter().zip(total).map(|(c, w)| w - c).fold(0.0, f64::max);
    chunk.iter().sum::<f64>() + slowest
}

/// Chunks through stages in order, each chunk's time in each stage given: a chunk
/// enters a stage once it has left the one before and the stage is done with the chunk
/// before it. When the last chunk leaves the last stage.
fn flow_shop<const S: usize>(chunks: &[[f64; S]]) -> f64 {
    let mut done = [0.0f64; S];
    for chunk in chunks {
        let mut ready = 0.0f64;
        for (stage, t) in done.iter_mut().zip(chunk) {
            *stage = stage.max(ready) + t;
            ready = *stage;
        }
    }
    done.last().copied().unwrap_or(0.0)
}

/// Binomial-tree Bcast of `n` bytes. The root compresses from the caller's buffer, each
/// receiver decodes into its own (the caller's, mapped already: nothing allocated).
///
/// C-Coll (`k` chunks, compressed once at the root): the root's link carries each chunk
/// to its `L` children, inner ranks forward each chunk as it arrives and decode it while
/// the next travel; the first chunk crosses the `L` levels, then each chunk passes the
/// stages (compressing it, the root's link, decoding it) in turn, each stage taking the
/// chunk's share of the vector's bytes or codec work ([`Params::profile`]): chunks that
/// carry no bytes arrive at once behind the ones that do, and their decoding follows.
/// CPR-P2P (`recompress`): whole messages, decoded and compressed again (once per
/// child) at every inner rank. Eager messages leave one by one, the deepest child's
/// first: the path to the deepest leaf crosses `L` compressions and message times.
/// Rendezvous ones move together once the parent has compressed for every child, so its
/// link carries all their messages before the deepest child can go on: `L + (L - 1) +
/// ... + 1` of each.
fn tree_bcast(t: &Terms, n: f64, recompress: bool) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let levels = (all as f64).log2().ceil();
    if !recompress {
        let k = chunks(n) as usize;
        let coded = n / p.ratio;
        // The first chunk crosses the L levels; then the root's link carries the others
        // to each of its children (its burst at once), each its share of the bytes.
        let (first, ..) = p.profile.chunk(0, k);
        let hops = levels * (p.alpha_s + first * coded / p.link_bytes_per_s);
        let rest = (levels * p.alpha_s + t.wire_rested(levels * coded) - hops).max(0.0);
        let stages: Vec<[f64; 3]> = (0..k)
            .map(|i| {
                let (bytes, comp, decomp) = p.profile.chunk(i, k);
                let link = match i {
                    0 => hops,
                    _ if first < 1.0 => rest * bytes / (1.0 - first),
                    _ => 0.0,
                };
                [t.comp(comp * n, ALONE), link, t.decomp(decomp * n, all)]
            })
            .collect();
        return flow_shop(&stages);
    }
    // A parent compresses the whole vector once per child, the deepest subtree's first.
    // Eager messages leave as each is compressed: each level costs one compression and
    // one message time. Rendezvous messages move once the parent waits, after all its
    // compressions, and its link carries them all at once.
    let eager = n / p.ratio <= p.eager_bytes;
    // `decode`: what the rank decoded before it compresses (one burst with it), under
    // `load`. What a rank of the deepest path sends first is its deepest child's
    // message (eager) or all of them (rendezvous): the first bytes on a link idle since
    // the call before, whose bucket is full.
    let hop = |children: f64, decode: f64, code: f64, load: Load| {
        let sent = if eager { 1.0 } else { children };
        t.burst(decode + sent * code, load) + p.alpha_s + t.wire_rested(sent * n / p.ratio)
    };
    // The root compresses alone; on the deepest path each rank decodes and compresses
    // again on the path ([`on_path`]); the leaf decodes last.
    let mut time = hop(levels, 0.0, t.comp(n, ALONE), ALONE);
    let mut size = all;
    for j in 1..levels as usize {
        size = size.div_ceil(2);
        let load = on_path(all, size, j);
        time += hop(levels - j as f64, t.decomp(n, load), t.recomp(n, load), load);
    }
    let leaf = on_path(all, 1, all);
    time + t.burst(t.decomp(n, leaf), leaf)
}

/// A tree root at work while every other rank waits for it, sleeping.
const ALONE: Load = Load::Beside { computing: 0.0, polling: 0.0 };

/// Who runs beside the rank of a binomial tree's deepest path that is `depth` levels
/// below the root and whose subtree holds `size` of the `all` ranks: its ancestors have
/// sent their messages and poll, done with the call; the ranks of the subtrees off the
/// path above it work on their own messages at once; its own subtree waits for it,
/// sleeping. At the leaf (`size` 1, `depth` at least the rest) every other rank is
/// done.
fn on_path(all: usize, size: usize, depth: usize) -> Load {
    let polling = depth.min(all.saturating_sub(size));
    Load::Beside { computing: all.saturating_sub(size + polling) as f64, polling: polling as f64 }
}

/// Binomial-tree Scatter of blocks of `m` bytes.
///
/// C-Coll (`k` chunks a block): the root compresses every block once, chunk by chunk,
/// and sends each chunk towards its rank as soon as it is made (its link carries one
/// chunk while it compresses the next); inner ranks forward their subtree's chunks as
/// they arrive, and each rank decodes its own into the caller's buffer while the root
/// goes on. The call ends with the last block: its chunks cross the `L` levels and are
/// decoded as they come, while the root copies its own block into its output.
/// CPR-P2P (`recompress`): whole messages; the root copies its own block and compresses
/// its children's straight from the caller's input (root 0: every child's blocks lie
/// there in order), an inner rank decodes its own block into the caller's output and its
/// children's into its subtree buffer, and compresses those again, and a leaf decodes
/// its block straight into the caller's output;
/// along the deepest path a rank of subtree size `s` compresses and sends the `s / 2`
/// blocks of its deepest child first (eager), or all `s - 1` before that child can go on
/// (rendezvous). The call ends with the later of that path's leaf and the root's last
/// child, whose block the root compresses last: with unlike blocks (an easy last half)
/// it can be the later one.
fn tree_scatter(t: &Terms, m: f64, recompress: bool) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let wire = m / p.ratio / p.link_bytes_per_s;
    if !recompress {
        let others = all as f64 - 1.0;
        let levels = (all as f64).log2().ceil();
        let k = chunks(m);
        let (hop, decode) = (wire / k, t.decomp(m / k, all));
        // The root compresses beside the ranks done with the call: a block's rank is done
        // about a block's time after it left, so while the root compresses block i
        // (from 0), i - 1 of them. The blocks before the last: the root's compression
        // (beside the mean of those counts) and its link (rested before the call) at
        // once.
        let done = |i: f64| (i - 1.0).max(0.0);
        let beside = |polling| Load::Beside { computing: 0.0, polling };
        let earlier = others - 1.0;
        let mean_done = (0..earlier as usize).map(|i| done(i as f64)).sum::<f64>() / earlier.max(1.0);
        let before = (earlier * k * t.comp(m / k, beside(mean_done))).max(t.wire_rested(earlier * m / p.ratio));
        let for_last = beside(done(earlier));
        let comp = t.comp(m / k, for_last);
        let links = levels * (p.alpha_s + hop);
        let last = pipeline(&[comp, links, decode], &[k * comp, links + (k - 1.0) * hop, k * decode]);
        return before + last.max(k * comp + t.copy(m, for_last));
    }
    // An inner rank decodes its own block into the caller's output, its children's into
    // its subtree buffer ([`Terms::subtree`]), which the deepest path's rank of each
    // level ([`on_path`]) writes as it decodes. A parent compresses and
    // sends its children's blocks child by child, the deepest subtree (the last half of
    // its own) first: an eager message leaves then, and the deepest child goes on; a
    // rendezvous one waits until the parent has compressed for every child, and its
    // link carries them all. Each set of blocks is priced at its own share of the input's
    // bytes and codec work ([`Params::scatter_input`]).
    let others = all as f64 - 1.0;
    let rest = p.scatter_input.span(1.0 / all as f64, 1.0);
    let blocks = |from: usize, to: usize| {
        let (bytes, comp, decomp) = p.scatter_input.span(from as f64 / all as f64, to as f64 / all as f64);
        Blocks { coded: others * m * bytes / rest.0 / p.ratio, comp: others * m * comp / rest.1, decomp: others * m * decomp / rest.2 }
    };
    let mut time = 0.0;
    let (mut from, mut size, mut depth) = (0, all, 0);
    while size > 1 {
        let (load, s) = (on_path(all, size, depth), size as f64);
        let deepest = size.div_ceil(2);
        let child = blocks(from + size - deepest, from + size);
        let sent = if child.coded <= p.eager_bytes { child } else { blocks(from + 1, from + size) };
        // One burst; then the first bytes on the parent's link in this call (rested).
        let work = if size == all {
            t.burst(t.copy(m, load) + t.comp(sent.comp, load), load)
        } else {
            t.burst(t.subtree((s - 1.0) * m, (s - 1.0) * m, load) + t.decomp(blocks(from, from + size).decomp, load) + t.recomp(sent.comp, load), load)
        };
        time += work + p.alpha_s + t.wire_rested(sent.coded);
        (from, size, depth) = (from + size - deepest, deepest, depth + 1);
    }
    // The last rank decodes its block into the caller's output.
    let leaf = on_path(all, 1, all);
    let deepest_path = time + t.burst(t.decomp(blocks(from, from + 1).decomp, leaf), leaf);
    if all <= 2 {
        return deepest_path;
    }
    // The root's last child (virtual rank 1, a leaf): its block leaves once the root has
    // compressed every other one, and it decodes beside the deepest subtrees' ranks.
    let (root, own, beside) = (on_path(all, all, 0), blocks(1, 2), on_path(all, 1, 1));
    let all_sent = blocks(1, all);
    let on_link = if own.coded <= p.eager_bytes { own.coded } else { all_sent.coded };
    let last = t.burst(t.copy(m, root) + t.comp(all_sent.comp, root), root) + p.alpha_s + t.wire_rested(on_link) + t.burst(t.decomp(own.decomp, beside), beside);
    deepest_path.max(last)
}

/// A set of a Scatter root's blocks: its compressed bytes, and the uncompressed bytes
/// that would take as long to compress and to decode at the call's speeds.
struct Blocks {
    coded: f64,
    comp: f64,
    decomp: f64,
}

/// C-Coll binomial-tree Gather of blocks of `m` bytes, in `k` chunks each: every other
/// rank compresses its block chunk by chunk (all at once) and sends each chunk as it is
/// made, inner ranks forward their children's chunks as they arrive, and the root decodes
/// each chunk as it arrives (its copy of its own block runs while the first chunks are
/// compressed: not priced). Stages: the senders' compression, the root's link (carrying
/// the `p - 1` other blocks), the root's decoding into the caller's output.
fn tree_gather(t: &Terms, m: f64) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let others = all as f64 - 1.0;
    let levels = (all as f64).log2().ceil();
    let k = chunks(m);
    let c = m / k;
    let wire = c / p.ratio / p.link_bytes_per_s;
    let (comp, decomp) = (t.comp(c, all), t.decomp(c, all));
    let link = t.wire_rested(others * m / p.ratio);
    let flow = pipeline(&[comp, wire, decomp], &[k * comp, link, others * k * decomp]);
    levels * p.alpha_s + flow
}

/// C-Coll ring allgather of blocks of `m` bytes, in `k` chunks each. A rank first
/// compresses its own block chunk by chunk, sending each (the previous rank's block
/// arrives meanwhile); then it forwards each incoming chunk as it arrives and decodes it,
/// so the other `p - 2` blocks cross the link (both directions busy) while the `p - 1`
/// received ones are decoded, the last chunk's decoding after it arrives. As the
/// Allreduce's second stage (`after_reduce_scatter`) the rank decodes its own block at
/// the end too (every rank ends with the same values), and its links are busy from the
/// reduce-scatter; as the Allgather it starts the call, its own block's stream on a
/// rested link.
fn ring_allgather(t: &Terms, m: f64, after_reduce_scatter: bool) -> f64 {
    let p = t.p;
    let all = p.ranks.max(1);
    let steps = all as f64 - 1.0;
    let k = chunks(m);
    let decomp = t.decomp(m / k, all);
    let wire = t.wire_chunks(m / p.ratio);
    let own_wire = if after_reduce_scatter { wire } else { t.wire_chunks(t.after_rest(m / p.ratio)) };
    let own = (k * t.comp(m / k, all)).max(p.alpha_s + own_wire);
    let rest = (steps - 1.0) * p.alpha_s + ((steps - 1.0) * wire + decomp).max(steps * k * decomp);
    own + rest + if after_reduce_scatter { k * decomp } else { 0.0 }
}

/// Predicted seconds of plain MPI (Open MPI 4.1's `tuned` decisions for messages of 1 MiB
/// and more, commutative reductions; ccoll-bench's `bytes` convention), on the caller's
/// buffers (mapped already). Of the library's own temporary buffers only the
/// Allreduce's are priced.
/// - Allreduce: Rabenseifner (recursive-halving reduce-scatter, recursive-doubling
///   allgather: both directions busy), a fold-in step for ranks beyond a power of two,
///   and its temporaries: the input copied into the output, a receive buffer of the
///   whole vector allocated, 3/4 of it written and freed, every call.
/// - Bcast: a chain without segments below 8 ranks (`p - 1` store-and-forward hops),
///   linear (the root sends to each) below 16, scatter + allgather below 32 and from
///   1024, a radix-4 k-nomial tree (3 sends per level) in between.
/// - Scatter: linear (the root sends every block in turn).
/// - Allgather: recursive doubling below 32 ranks, then ring or neighbour exchange:
///   `(p - 1) m` each way.
/// - Alltoall: every pair at once (linear, `p - 1` flows each way), pairwise exchange
///   (one flow) from 64 to 1023 ranks.
/// - Reduce-scatter, Reduce, Gather, point-to-point: the ring, the same plus a gather,
///   the mirror of Scatter, one message.
pub fn mpi_time_s(op: CollOp, bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let np = p.ranks.max(1);
    let n = np as f64;
    let steps = n - 1.0;
    let all = np;
    let b = bytes / n;
    let rs_ring = steps * (t.duplex(b, 1.0) + t.reduce(b, all));
    match op {
        CollOp::Allreduce => {
            let pow2 = 1usize << (usize::BITS - 1 - np.leading_zeros());
            let (q, fold) = (pow2 as f64, pow2 != np);
            let halves = (q - 1.0) / q * bytes;
            let rounds = q.log2();
            let fold_in = if fold { 2.0 * t.msg(bytes) + t.reduce(bytes, all) } else { 0.0 };
            // Open MPI's Rabenseifner (`ompi_coll_base_allreduce_intra_redscat_allgather`)
            // mallocs a receive buffer of the whole vector in every call, copies the input
            // into the output before the first exchange, receives the halving steps' 3/4
            // of the vector into that buffer (its pages' first write, unless glibc serves
            // it from the heap) and frees it as it returns.
            let temporaries = t.copy(bytes, all) + t.fresh(halves, bytes, all) + t.unmap(halves, bytes, all);
            temporaries + fold_in + 2.0 * (rounds * p.alpha_s + t.wire_duplex(halves, 1.0)) + t.reduce(halves, all)
        }
        CollOp::ReduceScatter => rs_ring,
        CollOp::Reduce => rs_ring + steps * t.msg(b),
        CollOp::Bcast => {
            let levels = n.log2().ceil();
            let spread = steps / n * bytes;
            match np {
                // Chain, or the root sending to each in turn: p - 1 message times.
                0..=15 => steps * t.msg(bytes),
                // Binomial scatter of the pieces, recursive-doubling allgather.
                16..=31 | 1024.. => 2.0 * levels * p.alpha_s + spread / p.link_bytes_per_s + t.wire_duplex(spread, 1.0),
                _ => (levels / 2.0).ceil() * 3.0 * t.msg(bytes),
            }
        }
        CollOp::Scatter | CollOp::Gather => steps * t.msg(bytes),
        CollOp::Allgather => {
            if np < 32 {
                n.log2().ceil() * p.alpha_s + t.wire_duplex(steps * bytes, 1.0)
            } else {
                steps * t.duplex(bytes, 1.0)
            }
        }
        CollOp::Alltoall => {
            let flows = if (64..1024).contains(&np) { 1.0 } else { steps };
            steps * p.alpha_s + t.wire_duplex(steps * bytes, flows)
        }
        CollOp::P2p => t.msg(bytes),
    }
}

/// Predicted seconds of the hierarchical allreduce whose group leaders run `leaders`
/// (an allreduce algorithm) among themselves: `c-coll` is its compressed allreduce,
/// `mpi` the same with every frame raw (below the compression threshold), priced as the
/// ring of raw blocks, which moves as many bytes each way.
pub fn hier_time_s(bytes: f64, p: &Params, leaders: Algorithm) -> f64 {
    let (groups, _) = p.groups();
    let among = Params { ranks: groups, group_ranks: 1, ..*p };
    let exchange = if leaders == Algorithm::Mpi { raw_ring_allreduce_s(bytes, &among) } else { time_s(CollOp::Allreduce, leaders, bytes, &among).unwrap_or(f64::INFINITY) };
    intra_reduce_bcast(bytes, p) + exchange
}

/// The ring allreduce with every frame raw: reduce-scatter and allgather of `p - 1`
/// steps each on blocks of `bytes / p`.
fn raw_ring_allreduce_s(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let n = p.ranks.max(1) as f64;
    if n <= 1.0 {
        return 0.0;
    }
    let b = bytes / n;
    (n - 1.0) * (2.0 * t.duplex(b, 1.0) + t.reduce(b, p.ranks))
}

/// Predicted seconds of the hierarchical allreduce's uncompressed path (NV-Group's small-
/// message path): reduce inside the groups, every leader receives every other leader's
/// partial result and reduces them all, broadcast inside the groups.
pub fn hier_host_time_s(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let (groups, _) = p.groups();
    let others = groups as f64 - 1.0;
    let leaders = Params { ranks: groups, ..*p };
    let allgather = Terms { p: &leaders };
    intra_reduce_bcast(bytes, p) + others * allgather.msg(bytes) + others * t.reduce(bytes, 1)
}

/// The binomial reduce and broadcast inside the largest node group.
fn intra_reduce_bcast(bytes: f64, p: &Params) -> f64 {
    let t = Terms { p };
    let (_, g) = p.groups();
    let levels = (g as f64).log2().ceil();
    levels * (2.0 * t.intra(bytes) + t.reduce(bytes, g))
}

/// The link rate (bits/s) at which `algo` and plain MPI take the same time for `op` on
/// `bytes`; compression pays below it. `None` if the algorithm does not apply, and the
/// search range's end if one side wins everywhere in 1 Mbit/s to 10 Tbit/s.
pub fn break_even_bits(op: CollOp, algo: Algorithm, bytes: f64, p: &Params, efficiency: f64) -> Option<BreakEven> {
    let gain = |bits: f64| -> Option<f64> {
        let q = p.with_link_bits(bits, efficiency);
        Some(time_s(op, Algorithm::Mpi, bytes, &q)? - time_s(op, algo, bytes, &q)?)
    };
    let (mut lo, mut hi) = (1e6f64, 1e13f64);
    if gain(lo)? <= 0.0 {
        return Some(BreakEven::Never);
    }
    if gain(hi)? > 0.0 {
        return Some(BreakEven::Always);
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if gain(mid)? > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(BreakEven::At(lo))
}

/// Result of [`break_even_bits`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BreakEven {
    /// Compression pays below this many bits per second.
    At(f64),
    /// Compression loses even at 1 Mbit/s.
    Never,
    /// Compression wins even at 10 Tbit/s.
    Always,
}

#[cfg(test)]
mod tests {
    use super::*;
    use Algorithm::*;
    use CollOp::*;

    fn params(ranks: usize) -> Params {
        Params {
            ranks,
            link_bytes_per_s: 125e6,
            alpha_s: 50e-6,
            comp_bytes_per_s: 500e6,
            decomp_bytes_per_s: 500e6,
            reduce_bytes_per_s: 2e9,
            ratio: 10.0,
            intra_bytes_per_s: 5e9,
            intra_alpha_s: 1e-6,
            ..Params::IDEAL
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn chunk_streams_move_at_their_own_duplex_efficiency() {
        // Slow codecs would hide the wire inside the pipeline: make the codec free.
        let fast = Params { comp_bytes_per_s: 1e15, decomp_bytes_per_s: 1e15, reduce_bytes_per_s: 1e15, ..params(4) };
        let half = Params { chunk_duplex_efficiency: 0.5, ..fast };
        let t = |op, algo, p: &Params| time_s(op, algo, 64e6, p).unwrap();
        // C-Coll's Allreduce (direct reduce-scatter, ring allgather), Allgather and
        // Alltoall are chunk streams, wire-bound here: at half the rate both ways they
        // take about twice as long.
        for op in [Allreduce, Allgather, Alltoall] {
            let ratio = t(op, CColl, &half) / t(op, CColl, &fast);
            assert!((1.9..=2.0).contains(&ratio), "{op:?}: {ratio}");
        }
        // Whole messages (CPR-P2P, plain MPI) and one-way trees are not.
        for (op, algo) in [(Allreduce, CprP2p), (Allreduce, Mpi), (Alltoall, CprP2p), (Bcast, CColl)] {
            assert_eq!(t(op, algo, &half), t(op, algo, &fast), "{op:?} {algo:?}");
        }
    }

    #[test]
    fn the_heaviest_sender_paces_alltoalls_scatters_and_chunk_allgathers_the_heaviest_steps_step_rings() {
        let r = Ratios { mean: 25.0, heaviest_sender: 10.9, heaviest_steps: 5.4 };
        // Alltoall: the rank with the least compressible blocks sends the most.
        assert_eq!(pacing_ratio(Alltoall, CColl, r), 10.9);
        assert_eq!(pacing_ratio(Alltoall, CprP2p, r), 10.9);
        // With a codec fast enough to leave the link the limit, that rank's 2.3 times as
        // many bytes take 2.3 times as long.
        let p = Params { comp_bytes_per_s: 1e15, decomp_bytes_per_s: 1e15, ..params(4) };
        let at = |ratio: f64| time_s(Alltoall, CColl, 64e6, &Params { ratio, ..p }).unwrap();
        let slower = at(pacing_ratio(Alltoall, CColl, r)) / at(25.0);
        assert!((slower - 25.0 / 10.9).abs() < 0.01, "{slower}");
        // CPR-P2P's rings move whole blocks step by step, each step paced by its heaviest.
        for (op, algo) in [(Allreduce, CprP2p), (Allgather, CprP2p)] {
            assert_eq!(pacing_ratio(op, algo, r), 5.4, "{op:?} {algo:?}");
        }
        // C-Coll's Allgather and direct reduce-scatters stream without steps: the link of
        // the rank that sends the most.
        for op in [Allgather, Allreduce, ReduceScatter, Reduce] {
            assert_eq!(pacing_ratio(op, CColl, r), 10.9, "{op:?}");
        }
        // Scatter: the root's own, without what inner ranks forward again.
        for algo in [CprP2p, CColl] {
            assert_eq!(pacing_ratio(Scatter, algo, r), 10.9, "{algo:?}");
        }
        // Bcast and Gather: every rank forwards the same vector, the root receives every
        // block: the whole call's ratio.
        for (op, algo) in [(Bcast, CprP2p), (Bcast, CColl), (Gather, CColl)] {
            assert_eq!(pacing_ratio(op, algo, r), 25.0, "{op:?} {algo:?}");
        }
        // Never above the whole call's.
        assert_eq!(pacing_ratio(Allgather, CprP2p, Ratios { heaviest_steps: 30.0, ..r }), 25.0);
    }

    #[test]
    fn a_message_after_a_pause_passes_what_its_link_refilled_at_once() {
        // 0.5 MB of token bucket at 125 MB/s refills in 4 ms. CPR-P2P's point-to-point
        // message (6.4 MB) follows its compression (128 ms): 4 ms less.
        let p = params(2);
        let shaped = Params { link_burst_bytes: 0.5e6, ..p };
        let n = 64e6;
        let saved = time_s(P2p, CprP2p, n, &p).unwrap() - time_s(P2p, CprP2p, n, &shaped).unwrap();
        assert!(close(saved, 4e-3), "{saved}");
        // After a 64 us compression the bucket holds 8 kB: 64 us less.
        let fast = Params { comp_bytes_per_s: 1e12, ..p };
        let saved = time_s(P2p, CprP2p, n, &fast).unwrap() - time_s(P2p, CprP2p, n, &Params { link_burst_bytes: 0.5e6, ..fast }).unwrap();
        assert!((saved - 64e-6).abs() < 1e-9, "{saved}");
        // A message smaller than the bucket costs its latency alone.
        let small = time_s(P2p, CprP2p, 4e6, &shaped).unwrap() - 2.0 * 4e6 / 500e6;
        assert!(close(small, 50e-6), "{small}");
    }

    #[test]
    fn plain_mpi_is_the_algorithm_open_mpi_picks() {
        let p = params(4);
        let n = 64e6;
        // Rabenseifner: two rounds of halving, two of doubling, 3/4 of the vector each way.
        let want = 2.0 * (2.0 * 50e-6 + 0.75 * n / 125e6) + 0.75 * n / 2e9;
        assert!(close(time_s(Allreduce, Mpi, n, &p).unwrap(), want));
        // Both directions busy at half the rate: the transfers take twice as long.
        let half = Params { duplex_efficiency: 0.5, ..p };
        assert!(close(time_s(Allreduce, Mpi, n, &half).unwrap(), want + 2.0 * 0.75 * n / 125e6));
        // 6 ranks: the two beyond 4 fold in first (a message there and back, one sum).
        let six = time_s(Allreduce, Mpi, n, &params(6)).unwrap();
        assert!(close(six, want + 2.0 * (50e-6 + n / 125e6) + n / 2e9), "{six}");
        // Its temporaries: the input copied into the output (4 ranks on a core of their
        // own each), 3/4 of the whole-vector receive buffer first written and unmapped,
        // or written into heap memory mapped already when glibc reuses it.
        let mem = Params { copy_bytes_per_s: 4e9, fresh_bytes_per_s: 1e9, reused_bytes_per_s: 8e9, unmap_bytes_per_s: 16e9, heap_reuse_below_bytes: 32e6, ..p };
        let mapped = time_s(Allreduce, Mpi, n, &mem).unwrap();
        assert!(close(mapped, want + n / 4e9 + 0.75 * n / 1e9 + 0.75 * n / 16e9), "{mapped}");
        let (m, small) = (16e6, time_s(Allreduce, Mpi, 16e6, &p).unwrap());
        let reused = time_s(Allreduce, Mpi, m, &mem).unwrap();
        assert!(close(reused, small + m / 4e9 + 0.75 * m / 8e9), "{reused}");
        // Bcast: a chain of 3 store-and-forward hops on 4 ranks; 3 sends per level of a
        // radix-4 tree on 64 (3 levels).
        assert!(close(time_s(Bcast, Mpi, n, &p).unwrap(), 3.0 * (50e-6 + n / 125e6)));
        assert!(close(time_s(Bcast, Mpi, n, &params(64)).unwrap(), 9.0 * (50e-6 + n / 125e6)));
        // Alltoall: 3 flows each way share the duplex loss. The output is the caller's
        // (mapped already): fresh-memory speed changes nothing.
        let fresh = Params { fresh_bytes_per_s: 4e9, ..half };
        let a2a = time_s(Alltoall, Mpi, n, &fresh).unwrap();
        assert!(close(a2a, 3.0 * 50e-6 + 3.0 * n / (125e6 * (1.0 - 0.5 / 3.0))), "{a2a}");
        assert_eq!(time_s(Bcast, RecursiveDoubling, n, &p), None);
        assert_eq!(time_s(Bcast, Hierarchical, n, &p), None);
        assert_eq!(time_s(Allreduce, Auto, n, &p), None);
        assert_eq!(time_s(Allreduce, CColl, n, &params(1)), Some(0.0));
    }

    #[test]
    fn cpr_bcast_recompresses_whole_messages_at_every_hop() {
        let p = params(8);
        let n = 64e6;
        let (code, wire) = (n / 500e6, n / 10.0 / 125e6);
        // 3 levels of eager messages (6.4 MB): the root compresses for its deepest child
        // and its message leaves, the 2 inner ranks on the path decode and compress again
        // for theirs, the leaf decodes (every rank into the caller's buffer).
        let want = 3.0 * (code + 50e-6 + wire) + 2.0 * code + code;
        let cpr = time_s(Bcast, CprP2p, n, &p).unwrap();
        assert!(close(cpr, want), "{cpr}");
        // Each of its 6 codec passes on the path adds its fixed cost.
        let called = Params { codec_call_s: 1e-3, ..p };
        assert!(close(time_s(Bcast, CprP2p, n, &called).unwrap(), want + 6e-3));
        // Rendezvous: the messages wait until their parent has compressed for each of
        // its children (3, then 2, then 1), then share its link: 6 compressions and 6
        // message times on the path.
        let rendezvous = Params { eager_bytes: 1e6, ..p };
        let want = 6.0 * code + 3.0 * 50e-6 + 6.0 * wire + 3.0 * code;
        let cpr = time_s(Bcast, CprP2p, n, &rendezvous).unwrap();
        assert!(close(cpr, want), "{cpr} {want}");
        // A shaped link: each rank of the path sends the first bytes on its link in the
        // call, so each of the 3 hops passes a full bucket at once, however short the
        // codec work before it (here a fast codec's 0.13 ms against the bucket's 4 ms).
        let fast = Params { comp_bytes_per_s: 500e9, decomp_bytes_per_s: 500e9, recomp_bytes_per_s: Some(500e9), ..p };
        let saved = time_s(Bcast, CprP2p, n, &fast).unwrap() - time_s(Bcast, CprP2p, n, &Params { link_burst_bytes: 0.5e6, ..fast }).unwrap();
        assert!(close(saved, 3.0 * 0.5e6 / 125e6), "{saved}");
    }

    #[test]
    fn c_coll_trees_overlap_codec_and_links() {
        let p = params(8);
        let n = 64e6;
        // 16 chunks of 4 MB: the first crosses 3 levels, then the root's link (3 children
        // x 0.4 MB) is the slowest stage for the other 15.
        let (c, wire) = (4e6, 4e6 / 10.0 / 125e6);
        let want = c / 500e6 + 3.0 * (50e-6 + wire) + c / 500e6 + 15.0 * (3.0 * wire);
        assert!(close(time_s(Bcast, CColl, n, &p).unwrap(), want), "{}", time_s(Bcast, CColl, n, &p).unwrap());
        // A codec pass per chunk: only the first chunk's two are on the path (a chunk's
        // 9 ms of compression still hides behind the link's 9.6 ms).
        let called = Params { codec_call_s: 1e-3, ..p };
        assert!(close(time_s(Bcast, CColl, n, &called).unwrap(), want + 2e-3));
        // On 1024 ranks the first chunk crosses 10 levels, then the root's link carries
        // 10 copies of each of the other 15 (where whole messages would cross 55 hops).
        let deep = time_s(Bcast, CColl, n, &params(1024)).unwrap();
        assert!(close(deep, 2.0 * c / 500e6 + 10.0 * (50e-6 + wire) + 15.0 * 10.0 * wire), "{deep}");
        // Scatter, 16 chunks of 0.5 MB a block: the root's link (0.4 ms a chunk) hides
        // behind its compressing (1 ms) of all 7 blocks; the last block's last chunk then
        // crosses the 3 levels and is decoded.
        let m = 8e6;
        let wire = m / 10.0 / 125e6;
        let scatter = 7.0 * m / 500e6 + 3.0 * (50e-6 + wire / 16.0) + 0.5e6 / 500e6;
        assert!(close(time_s(Scatter, CColl, m, &p).unwrap(), scatter), "{}", time_s(Scatter, CColl, m, &p).unwrap());
        // Decoding at the leaves (250 MB/s: 2 ms a chunk) slower than the root's
        // compression: the last block's 16 chunks are decoded one after another from the
        // first one's arrival.
        let slow_decoder = Params { decomp_bytes_per_s: 250e6, ..p };
        let slow = 6.0 * m / 500e6 + 0.5e6 / 500e6 + 3.0 * (50e-6 + wire / 16.0) + 16.0 * (0.5e6 / 250e6);
        assert!(close(time_s(Scatter, CColl, m, &slow_decoder).unwrap(), slow), "{}", time_s(Scatter, CColl, m, &slow_decoder).unwrap());
        // CPR-P2P: whole eager messages, the deepest child's first: the root compresses
        // 4 blocks for it, the inner ranks on the path decode 4 and 2 and compress 2 and
        // 1 again for theirs, the links carry 4, then 2, then 1.
        let cpr = (4.0 + 4.0 + 2.0 + 2.0 + 1.0 + 1.0) * m / 500e6 + 3.0 * 50e-6 + 7.0 * wire;
        assert!(close(time_s(Scatter, CprP2p, m, &p).unwrap(), cpr), "{}", time_s(Scatter, CprP2p, m, &p).unwrap());
    }

    #[test]
    fn a_cpr_p2p_scatter_prices_each_path_at_its_own_blocks() {
        // 4 ranks, blocks of 8 MB; the root's three (1-3) at ratio 10 together, 24 MB of
        // compression and decoding at the call's speeds, split by the blocks' shares
        // (each block four pieces of the profile).
        let by_block = |b: [f64; 4]| core::array::from_fn(|i| b[i / (PROFILE_PIECES / 4)] / (PROFILE_PIECES / 4) as f64);
        let input = |bytes, work| Profile { bytes: by_block(bytes), comp: by_block(work), decomp: by_block(work) };
        let (m, p) = (8e6, params(4));
        let t = |scatter_input| time_s(Scatter, CprP2p, m, &Params { scatter_input, ..p }).unwrap();
        let ms = |x: f64| x * 1e-3;
        // An easy last half (rtm's): the deepest path (root, 2, 3) compresses 9.6 MB,
        // sends 0.48 MB, decodes 9.6 and compresses 4.8 again, sends 0.16, decodes 4.8:
        // 62.8 ms. The root's last child gets block 1 after the root compressed all
        // 24 MB (48 ms), 1.92 MB on the link, 14.4 MB to decode: the later one.
        let easy_end = input([0.25, 0.6, 0.1, 0.05], [0.25, 0.45, 0.15, 0.15]);
        assert!(close(t(easy_end), 48.0e-3 + 50e-6 + 1.92e6 / 125e6 + ms(28.8)), "{}", t(easy_end));
        // A heavy block 2: the deepest path compresses 20.8 MB (2.24 MB sent), decodes
        // 20.8 and compresses 4.8 again (0.16 MB sent), decodes 4.8.
        let heavy_middle = input([0.25, 0.05, 0.65, 0.05], [0.25, 0.1, 0.5, 0.15]);
        let deepest = ms(41.6) + 2.24e6 / 125e6 + ms(51.2) + 0.16e6 / 125e6 + ms(9.6) + 2.0 * 50e-6;
        assert!(close(t(heavy_middle), deepest), "{}", t(heavy_middle));
        // Alike blocks: the deepest path, 2 + 2 + 1 + 1 blocks of codec work, 2 + 1 on
        // the links.
        let alike = 6.0 * m / 500e6 + 2.0 * 50e-6 + 3.0 * m / 10.0 / 125e6;
        assert!(close(t(Profile::UNIFORM), alike), "{}", t(Profile::UNIFORM));
    }

    #[test]
    fn c_coll_gather_and_allgather_decode_while_chunks_travel() {
        let p = params(4);
        let m = 16e6;
        // 16 chunks of 1 MB. Gather: the root decodes 3 blocks as they arrive (96 ms),
        // slower than its link (38.4 ms) and the senders' compression (32 ms): after the
        // first chunk is compressed and sent, the decoding sets the pace.
        let c = 1e6;
        let gather = 2.0 * 50e-6 + c / 500e6 + c / 10.0 / 125e6 + 3.0 * m / 500e6;
        assert!(close(time_s(Gather, CColl, m, &p).unwrap(), gather), "{}", time_s(Gather, CColl, m, &p).unwrap());
        // Uncompressed frames: the root's link sets the pace; the last chunk is decoded
        // after it arrives.
        let raw = Params { ratio: 1.0, ..p };
        let linked = 2.0 * 50e-6 + c / 500e6 + 3.0 * m / 125e6 + c / 500e6;
        assert!(close(time_s(Gather, CColl, m, &raw).unwrap(), linked), "{}", time_s(Gather, CColl, m, &raw).unwrap());
        // Allgather: a rank compresses its own block (32 ms, hiding its first message),
        // then decodes the 3 others as they come (96 ms; the link needs 25.6 for the 2
        // forwarded ones).
        let allgather = m / 500e6 + 2.0 * 50e-6 + 3.0 * m / 500e6;
        assert!(close(time_s(Allgather, CColl, m, &p).unwrap(), allgather), "{}", time_s(Allgather, CColl, m, &p).unwrap());
        // Uncompressed: 3 blocks cross each link, then the last chunk is decoded.
        let ring = 3.0 * (50e-6 + m / 125e6) + c / 500e6;
        assert!(close(time_s(Allgather, CColl, m, &raw).unwrap(), ring), "{}", time_s(Allgather, CColl, m, &raw).unwrap());
    }

    #[test]
    fn the_network_costs_cpu_with_every_compression_and_decode() {
        // Charged with the compression that makes it and the decode that takes it.
        let p = params(2);
        let net = Params { net_cpu_s_per_coded_byte: 1e-10, ..p };
        let b = 64e6;
        let extra = time_s(P2p, CprP2p, b, &net).unwrap() - time_s(P2p, CprP2p, b, &p).unwrap();
        assert!(close(extra, 2.0 * b * 1e-10), "{extra}");
        // On shared cores at the rank's share, without the codec's contention.
        let shared = Params { ranks_per_host: 4, host_cores: 2.0, contention: 1.25, ..net };
        assert!(close(Terms { p: &shared }.net(b, 4), b * 1e-10 / 0.5));
    }

    #[test]
    fn sharing_cores_slows_only_the_codec_terms() {
        let mut p = params(4);
        let alone = time_s(Allgather, CColl, 16e6, &p).unwrap();
        p.host_cores = 2.0;
        p.ranks_per_host = 4;
        let shared = time_s(Allgather, CColl, 16e6, &p).unwrap();
        // Compress 16 MB + decompress 48 MB at half speed: +64 MB / 500 MB/s.
        assert!((shared - alone - 64e6 / 500e6).abs() < 1e-9, "{alone} {shared}");
        assert_eq!(time_s(Allgather, Mpi, 16e6, &p), time_s(Allgather, Mpi, 16e6, &params(4)));
        // Two more runnable threads elsewhere: 4 + 2 compete for 2 cores, a third each.
        p.background_load = 2.0;
        let loaded = time_s(Allgather, CColl, 16e6, &p).unwrap();
        assert!((loaded - alone - 2.0 * 64e6 / 500e6).abs() < 1e-9, "{alone} {loaded}");
        // The Bcast root compresses alone at a whole core whether or not waits poll (a
        // tree's waiting ranks sleep): its first chunk of 1 MB costs the same (the
        // others hide behind the receivers' decoding).
        p.background_load = 0.0;
        let quiet = time_s(Bcast, CColl, 16e6, &p).unwrap();
        let polling = time_s(Bcast, CColl, 16e6, &Params { busy_wait: true, ..p }).unwrap();
        assert!(close(polling, quiet), "{quiet} {polling}");
        let slow_root = Params { comp_bytes_per_s: 250e6, ..p };
        assert!(close(time_s(Bcast, CColl, 16e6, &slow_root).unwrap() - quiet, 1e6 / 250e6 - 1e6 / 500e6));
    }

    #[test]
    fn the_scheduler_shares_cores_among_runnable_threads() {
        // 4 ranks of 2 codec threads on 2 cores, waiting ranks polling on one thread
        // each: a rank computing alone has 2 of the 5 runnable threads (0.8 of a core's
        // speed per pass), all four computing 2 of 8 (0.5); one background thread more
        // makes those 2 of 6 and 2 of 9.
        let p = Params { ranks: 4, host_cores: 2.0, ranks_per_host: 4, codec_threads: 2.0, busy_wait: true, ..params(4) };
        assert!(close(p.share(1), 0.8) && close(p.share(4), 0.5), "{} {}", p.share(1), p.share(4));
        let loaded = Params { background_load: 1.0, ..p };
        assert!(close(loaded.share(1), 4.0 / 6.0) && close(loaded.share(4), 4.0 / 9.0));
        // A rank never runs faster than its threads: 2 threads alone on 8 cores.
        assert!(close(Params { host_cores: 8.0, ..p }.share(1), 2.0));
        // The range pass is one thread: 16 MB scanned at a quarter of a core by each
        // Allgather rank (all four at once, half a core for each rank's two threads), at
        // a whole core by the Bcast root (the others wait, sleeping).
        let scanning = Params { scan_bytes_per_s: 4e9, ..p };
        let extra = |op| time_s(op, CColl, 16e6, &scanning).unwrap() - time_s(op, CColl, 16e6, &p).unwrap();
        assert!(close(extra(Allgather), 16e6 / (4e9 * 0.25)), "{}", extra(Allgather));
        assert!(close(extra(Bcast), 16e6 / 4e9), "{}", extra(Bcast));
    }

    #[test]
    fn a_burst_runs_its_first_half_slice_on_a_core_of_its_own() {
        // 4 ranks on 2 cores, all computing: half a core each. With 4 ms slices a burst
        // of 20 ms at that share runs its first 2 ms at a whole core's speed (18 ms); one
        // of 1 ms of work ends inside them; a rank alone on its core, or no slice, gains
        // nothing.
        let p = Params { ranks: 4, host_cores: 2.0, ranks_per_host: 4, busy_wait: true, slice_s: 4e-3, ..params(4) };
        let t = Terms { p: &p };
        assert!(close(t.burst(20e-3, 4), 18e-3) && close(t.burst(2e-3, 4), 1e-3), "{} {}", t.burst(20e-3, 4), t.burst(2e-3, 4));
        assert!(close(Terms { p: &Params { host_cores: 8.0, ..p } }.burst(20e-3, 4), 20e-3));
        let unsliced = Params { slice_s: 0.0, ..p };
        assert!(close(Terms { p: &unsliced }.burst(20e-3, 4), 20e-3));
        // Each burst gains 2 ms (64 MB passes take far longer): CPR-P2P's Alltoall one a
        // step (3), its Allreduce one a reduce-scatter step and four in the allgather (the
        // first compression, two relays, the last decode); a chunk stream (C-Coll's
        // Bcast and Allreduce) nothing.
        let gain = |op, algo| time_s(op, algo, 64e6, &unsliced).unwrap() - time_s(op, algo, 64e6, &p).unwrap();
        assert!(close(gain(Alltoall, CprP2p), 3.0 * 2e-3), "{}", gain(Alltoall, CprP2p));
        assert!(close(gain(Allreduce, CprP2p), 7.0 * 2e-3), "{}", gain(Allreduce, CprP2p));
        // CPR-P2P's Gather on 2 levels: the leaf's compression, the inner rank's decode
        // with its compression, the root's decode.
        assert!(close(gain(Gather, CprP2p), 3.0 * 2e-3), "{}", gain(Gather, CprP2p));
        for op in [Bcast, Allreduce] {
            assert_eq!(gain(op, CColl), 0.0, "{op:?}");
        }
    }

    #[test]
    fn a_bcast_receiver_decodes_the_chunks_that_carry_no_bytes_after_the_link() {
        // Pieces in other chunk counts: their shares spread evenly over their values.
        let mut front = Profile::UNIFORM;
        front.bytes = core::array::from_fn(|i| if i < PROFILE_PIECES / 2 { 2.0 / PROFILE_PIECES as f64 } else { 0.0 });
        assert!(close(Profile::UNIFORM.chunk(3, 16).0, 1.0 / 16.0) && close(Profile::UNIFORM.chunk(0, 4).2, 0.25));
        assert!(close(front.chunk(0, 4).0, 0.5) && close(front.chunk(3, 4).0, 0.0) && close(front.chunk(0, 32).0, 1.0 / 16.0));
        // 16 chunks of 4 MB, compressed in 1 ms, decoded in 4 ms, 2 copies of each on the
        // root's link: spread evenly, 6.4 ms a chunk, the link hides the decoding but the
        // last chunk's (the first chunk's hops are inside the link's time). With every
        // byte in the first half, the last 8 chunks arrive at once after the rest and
        // all their decoding follows.
        let p = Params { comp_bytes_per_s: 4e9, decomp_bytes_per_s: 1e9, ..params(4) };
        let t = |profile| time_s(Bcast, CColl, 64e6, &Params { profile, ..p }).unwrap();
        let link = 2.0 * 6.4e6 / 125e6;
        assert!(close(t(Profile::UNIFORM), 1e-3 + 2.0 * 50e-6 + link + 4e-3), "{}", t(Profile::UNIFORM));
        assert!(close(t(front) - t(Profile::UNIFORM), 8.0 * 4e-3), "{} {}", t(front), t(Profile::UNIFORM));
    }

    #[test]
    fn a_rank_with_more_codec_work_than_its_peers_finishes_it_with_a_core_to_itself() {
        // 4 ranks of one thread on 2 cores, polling while they wait: all coding at once,
        // a rank gets 0.5 / 1.25 of a core. With peers of a quarter of its codec work, a
        // quarter of its pass runs at that share, the rest alone (they sleep when done).
        let p = Params { ranks: 4, host_cores: 2.0, ranks_per_host: 4, contention: 1.25, busy_wait: true, ..params(4) };
        let lighter = Params { peer_work: 0.25, ..p };
        assert!(close(p.codec_share(4), 0.4), "{}", p.codec_share(4));
        assert!(close(lighter.codec_share(4), 1.0 / (0.25 / 0.4 + 0.75 / 1.0)), "{}", lighter.codec_share(4));
        assert!(close(Params { peer_work: 0.0, ..p }.codec_share(4), 1.0));
        // Only the codec passes: the range scan and copies are the same on every rank.
        assert!(close(lighter.share(4), 0.4));
        // A rank computing alone among polling ones keeps its share.
        assert!(close(lighter.codec_share(1), 0.5));
        // An Alltoall on a free link: the codec work is all there is beside the scan and
        // the copy, so it shrinks by the share's factor.
        let free = |q: Params| Params { link_bytes_per_s: 1e18, scan_bytes_per_s: f64::INFINITY, copy_bytes_per_s: f64::INFINITY, ..q };
        let t = |q: Params| time_s(Alltoall, CColl, 64e6, &free(q)).unwrap();
        let faster = t(p) / t(lighter);
        assert!(close(faster, lighter.codec_share(4) / 0.4), "{faster}");
    }

    #[test]
    fn only_ranks_computing_together_pay_contention() {
        // 4 ranks of one thread on 2 cores: a root computing while three poll gets half
        // a core and no contention; where the waiting ranks sleep it has a core of its
        // own. Several computing at once pay it whether or not the cores are
        // oversubscribed.
        let p = Params { ranks: 4, host_cores: 2.0, ranks_per_host: 4, contention: 1.25, busy_wait: true, ..params(4) };
        assert!(close(p.share(1), 0.5), "{}", p.share(1));
        assert!(close(Params { busy_wait: false, ..p }.share(1), 1.0));
        assert!(close(p.share(2), 0.5 / 1.25), "{}", p.share(2));
        assert!(close(Params { host_cores: 8.0, ..p }.share(4), 1.0 / 1.25));
        // Writing fresh pages is the kernel's work: a Reduce-scatter's work buffers (every
        // rank fills its own at once) cost the same with contention as without.
        let pages = |q: Params| {
            let t = |fresh_bytes_per_s| time_s(ReduceScatter, CprP2p, 16e6, &Params { fresh_bytes_per_s, ..q }).unwrap();
            t(1e9) - t(f64::INFINITY)
        };
        let uncontended = Params { contention: 1.0, ..p };
        assert!(pages(p) > 0.0 && close(pages(p), pages(uncontended)), "{} {}", pages(p), pages(uncontended));
        assert!(time_s(ReduceScatter, CprP2p, 16e6, &p).unwrap() > time_s(ReduceScatter, CprP2p, 16e6, &uncontended).unwrap());
        // A tree's ranks compute beside polling or sleeping ones: no contention.
        assert!(close(time_s(Scatter, CprP2p, 16e6, &p).unwrap(), time_s(Scatter, CprP2p, 16e6, &uncontended).unwrap()));
    }

    #[test]
    fn c_coll_streams_start_with_their_links_burst() {
        // Codecs all but free: every stream is link-bound. A link rested before the call
        // passes its 0.5 MB burst at once, 4 ms at 125 MB/s, once per call: on the stream
        // that starts it (the first reduce-scatter step, the own block's), not again.
        let free = Params { comp_bytes_per_s: 1e18, decomp_bytes_per_s: 1e18, reduce_bytes_per_s: 1e18, ..params(4) };
        let shaped = Params { link_burst_bytes: 0.5e6, ..free };
        for (op, bytes) in [(Alltoall, 16e6), (Bcast, 64e6), (Scatter, 16e6), (Gather, 16e6), (Allgather, 16e6), (Allreduce, 64e6), (P2p, 16e6)] {
            let saved = time_s(op, CColl, bytes, &free).unwrap() - time_s(op, CColl, bytes, &shaped).unwrap();
            assert!((saved - 4e-3).abs() < 1e-9, "{op:?}: {saved}");
        }
        // A stream shorter than the burst passes whole.
        let small = time_s(P2p, CColl, 1e6, &shaped).unwrap();
        assert!((small - 50e-6).abs() < 1e-9, "{small}");
    }

    #[test]
    fn cpr_steps_cross_at_the_links_one_way_rate() {
        // 4 ranks, 64 MB vectors (blocks of 16 MB) at ratio 4, codecs all but free: the
        // wire alone. Long two-way transfers keep half the link rate each way here; the
        // step messages of CPR-P2P's rings and pairwise Alltoall cross at the full rate.
        let free = Params { comp_bytes_per_s: 1e18, decomp_bytes_per_s: 1e18, reduce_bytes_per_s: 1e18, duplex_efficiency: 0.5, ratio: 4.0, ..params(4) };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let steps = 3.0 * (50e-6 + 16e6 / 4.0 / 125e6);
        for (op, bytes, rounds) in [(Allreduce, 64e6, 2.0), (Allgather, 16e6, 1.0), (Alltoall, 16e6, 1.0)] {
            let got = time_s(op, CprP2p, bytes, &free).unwrap();
            assert!(near(got, rounds * steps), "{op:?}: {got}");
        }
        // Plain MPI's allgather, long transfers both ways, does pay the duplex rate.
        assert!(time_s(Allgather, Mpi, 16e6, &free).unwrap() >= 2.0 * 3.0 * 16e6 / 125e6);
    }

    #[test]
    fn cpr_recompresses_decoded_blocks() {
        let n = 64e6;
        let b = n / 4.0;
        let wire = b / 10.0 / 125e6;
        let base = params(4);
        // CPR-P2P Allreduce, each of the 3 reduce-scatter steps: compress, send, decode
        // straight into the output, add the input's block; the allgather compresses the
        // rank's own block, then twice the block it decoded the step before (1 GB/s
        // instead of 0.5).
        let p = Params { recomp_bytes_per_s: Some(1e9), ..base };
        let rs = 3.0 * (b / 500e6 + 50e-6 + wire + b / 500e6 + b / 2e9);
        let ag = b / 500e6 + 2.0 * b / 1e9 + 3.0 * (50e-6 + wire + b / 500e6);
        let got = time_s(Allreduce, CprP2p, n, &p).unwrap();
        assert!(close(got, rs + ag), "{got} {}", rs + ag);
        // CPR-P2P Bcast on 8 ranks: the 2 inner ranks on the deepest path compress
        // decoded values at 1 GB/s: 2 x 64 MB / 1 GB/s less than at 0.5 GB/s.
        let slow = time_s(Bcast, CprP2p, n, &params(8)).unwrap();
        let fast = time_s(Bcast, CprP2p, n, &Params { recomp_bytes_per_s: Some(1e9), ..params(8) }).unwrap();
        assert!(close(slow - fast, 2.0 * (n / 500e6 - n / 1e9)), "{slow} {fast}");
    }

    #[test]
    fn a_c_coll_scatter_root_shares_its_core_with_the_ranks_done_before_it() {
        // 4 ranks, the codec's compression the only cost: the root compresses 3 blocks of
        // 16 MB. The first two at a whole core (no rank done yet), the last beside the
        // first block's rank, done and polling: on 2 cores it keeps a core of its own, on
        // one it gets half.
        let free = Params { link_bytes_per_s: 1e18, decomp_bytes_per_s: 1e18, ranks_per_host: 4, ..params(4) };
        let m = 16e6;
        let time = |host_cores| time_s(Scatter, CColl, m, &Params { host_cores, ..free }).unwrap() - 2.0 * 50e-6;
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(time(2.0), 3.0 * m / 500e6), "{}", time(2.0));
        assert!(near(time(1.0), 2.0 * m / 500e6 + m / 250e6), "{}", time(1.0));
    }

    #[test]
    fn cpr_tree_ranks_share_cores_with_the_ranks_off_their_subtree() {
        // 4 ranks on 2 cores, waits polling or not (a tree's waiting ranks sleep): the
        // root works alone (a whole core); its child on the deepest path decodes and
        // compresses again while the root, done, polls on one core and the other child
        // decodes on the other (half a core); the leaf decodes last, every other rank
        // done and polling (2 cores for 4 ranks: half a core).
        for busy_wait in [false, true] {
            let p = Params { host_cores: 2.0, ranks_per_host: 4, fresh_bytes_per_s: 1e9, busy_wait, ..params(4) };
            let n = 64e6;
            let (c, d) = (n / 500e6, n / 500e6);
            let want = c + 2.0 * (n / 10.0 / 125e6) + 2.0 * 50e-6 + 2.0 * (d + c) + 2.0 * d;
            let got = time_s(Bcast, CprP2p, n, &p).unwrap();
            assert!(close(got, want), "{got} {want}");
            // Scatter's buffer for the children's blocks (fresh, 1 GB/s) the same way,
            // blocks of 16 MB: the root's child fills its child's one block at half a core
            // (its own block, and the leaf's, decode into the caller's output; the root
            // sends from the caller's input).
            let m = 16e6;
            let free = Params { fresh_bytes_per_s: f64::INFINITY, ..p };
            let extra = time_s(Scatter, CprP2p, m, &p).unwrap() - time_s(Scatter, CprP2p, m, &free).unwrap();
            assert!(close(extra, 2.0 * m / 1e9), "{extra}");
        }
        // On 8 ranks the root's deepest child (a subtree of 4) works beside 3 ranks of the
        // other subtrees and the polling root: 4 cores leave it 3 of them for 4 ranks.
        let p = Params { ranks: 8, host_cores: 4.0, ranks_per_host: 8, ..params(8) };
        assert!(close(p.share(on_path(8, 4, 1)), 0.75), "{}", p.share(on_path(8, 4, 1)));
        // With no core to spare for the polling ranks all share alike: the leaf of 8
        // ranks on 4 cores. One rank per host: a core of its own.
        assert!(close(p.share(on_path(8, 1, 8)), 0.5));
        assert!(close(params(8).share(on_path(8, 4, 1)), 1.0));
        // Where the scheduler shares the cores alike (hold 0), the polling root takes its
        // turn like the two computing ranks: 2 cores for 3, two thirds each; halfway,
        // the mean of that and the half core a kept core leaves. The leaf beside three
        // polling ranks has no core to spare either way.
        let p = Params { host_cores: 2.0, ranks_per_host: 4, ..params(4) };
        for (hold, want) in [(0.0, 2.0 / 3.0), (0.5, (2.0 / 3.0 + 0.5) / 2.0), (1.0, 0.5)] {
            let p = Params { poller_hold: hold, ..p };
            assert!(close(p.share(on_path(4, 2, 1)), want), "{hold}: {}", p.share(on_path(4, 2, 1)));
            assert!(close(p.share(on_path(4, 1, 4)), 0.5));
        }
    }

    /// Every output is the caller's buffer, mapped already (ccoll-bench reuses its own),
    /// and the ring algorithms reduce out of place into it: nothing allocated (Open MPI's
    /// own Allreduce does).
    const NOTHING_ALLOCATED: [(CollOp, Algorithm); 17] = [
        (Allreduce, CprP2p),
        (Allreduce, CColl),
        (Allreduce, Ring),
        (Allreduce, CompressedDomain),
        (Bcast, Mpi),
        (Bcast, CprP2p),
        (Bcast, CColl),
        (Scatter, Mpi),
        (Scatter, CColl),
        (Gather, Mpi),
        (Gather, CColl),
        (Allgather, Mpi),
        (Allgather, CprP2p),
        (Allgather, CColl),
        (Alltoall, Mpi),
        (Alltoall, CprP2p),
        (Alltoall, CColl),
    ];

    /// What `changed` (a memory speed) adds to a call on 4 ranks over the same
    /// parameters without it, having checked that it adds nothing where the call
    /// allocates nothing.
    fn added_by(changed: fn(Params) -> Params) -> impl Fn(CollOp, Algorithm, f64) -> f64 {
        let base = Params { domain_reduce_bytes_per_s: Some(1e9), ..params(4) };
        let with = changed(base);
        for (op, algo) in NOTHING_ALLOCATED {
            assert_eq!(time_s(op, algo, 64e6, &with), time_s(op, algo, 64e6, &base), "{op:?} {algo:?}");
        }
        move |op, algo, bytes| time_s(op, algo, bytes, &with).unwrap() - time_s(op, algo, bytes, &base).unwrap()
    }

    #[test]
    fn fresh_memory_is_priced_only_where_the_call_allocates() {
        let (n, b) = (64e6, 16e6);
        let extra = added_by(|p| Params { fresh_bytes_per_s: 1e9, ..p });
        // Reduce-scatter's work buffer: each of CPR-P2P's 3 ring steps decodes a 16 MB
        // block into fresh pages (16 ms at 1 GB/s); C-Coll's direct reduce-scatter
        // writes only the own block.
        assert!(close(extra(ReduceScatter, CprP2p, n), 3.0 * b / 1e9));
        assert!(close(extra(ReduceScatter, CColl, n), b / 1e9));
        // Reduce: the same (the root decodes the 3 other blocks into the caller's output).
        assert!(close(extra(Reduce, CColl, n), b / 1e9));
        assert!(close(extra(Reduce, CprP2p, n), 3.0 * b / 1e9));
        // Recursive doubling's decode scratch: the whole vector once.
        assert!(close(extra(Allreduce, RecursiveDoubling, n), n / 1e9));
        // Open MPI's Allreduce receives 3/4 of the vector into its temporary buffer.
        assert!(close(extra(Allreduce, Mpi, n), 0.75 * n / 1e9));
        // CPR-P2P trees, blocks of 16 MB: Scatter's one inner rank on the deepest path
        // decodes its child's block into its buffer (its own into its output), Gather's
        // decodes its leaf's block into its own (the roots and leaves read and write the
        // caller's buffers).
        assert!(close(extra(Scatter, CprP2p, b), b / 1e9));
        assert!(close(extra(Gather, CprP2p, b), b / 1e9));
    }

    #[test]
    fn the_critical_rank_frees_its_buffers_as_it_returns() {
        let (n, b) = (64e6, 16e6);
        let extra = added_by(|p| Params { unmap_bytes_per_s: 1e9, ..p });
        // Reduce-scatter: every rank its work buffer of the whole vector, of which C-Coll
        // mapped only the own block; Reduce: the root's; recursive doubling: the decode
        // scratch.
        assert!(close(extra(ReduceScatter, CprP2p, n), n / 1e9));
        assert!(close(extra(ReduceScatter, CColl, n), b / 1e9));
        assert!(close(extra(Reduce, CColl, n), b / 1e9));
        assert!(close(extra(Reduce, CprP2p, n), n / 1e9));
        assert!(close(extra(Allreduce, RecursiveDoubling, n), n / 1e9));
        assert!(close(extra(Allreduce, Mpi, n), 0.75 * n / 1e9));
        // CPR-P2P trees: a Scatter's last leaf and a Gather's root allocate nothing (the
        // inner ranks free their buffers while those work).
        assert_eq!(extra(Scatter, CprP2p, b), 0.0);
        assert_eq!(extra(Gather, CprP2p, b), 0.0);
        // Below the heap-reuse size a buffer goes back to glibc's heap, not the kernel:
        // the C-Coll Reduce root's work buffer of 16 MB frees at no cost, of 64 MB its
        // mapped block as before.
        let heap = added_by(|p| Params { unmap_bytes_per_s: 1e9, heap_reuse_below_bytes: 32e6, ..p });
        assert_eq!(heap(Reduce, CColl, b), 0.0);
        assert!(close(heap(Reduce, CColl, n), b / 1e9));
    }

    #[test]
    fn buffers_below_the_heap_reuse_size_reuse_freed_memory() {
        // glibc's cap, 32 MiB: with blocks of 16 MB the CPR-P2P Scatter's one buffer on
        // the deepest path (its child's block) reuses heap memory at 8 GB/s; at 64 MB a
        // block it is fresh pages at 1 GB/s, and so it is below a 1 MiB cap.
        let b = 16e6;
        let base = Params { domain_reduce_bytes_per_s: Some(1e9), ..params(4) };
        let alloc = |below: f64, bytes: f64, op, algo| {
            let p = Params { fresh_bytes_per_s: 1e9, reused_bytes_per_s: 8e9, heap_reuse_below_bytes: below, ..base };
            time_s(op, algo, bytes, &p).unwrap() - time_s(op, algo, bytes, &base).unwrap()
        };
        let cap = GLIBC_MMAP_THRESHOLD_MAX;
        assert!(close(alloc(cap, b, Scatter, CprP2p), b / 8e9));
        assert!(close(alloc(cap, 4.0 * b, Scatter, CprP2p), 4.0 * b / 1e9));
        assert!(close(alloc(1048576.0, b, Scatter, CprP2p), b / 1e9));
        // Reduce-scatter's work buffer is the whole vector: 16 MB reuses, 64 MB does not
        // (C-Coll writes its own block of it, a quarter).
        assert!(close(alloc(cap, b, ReduceScatter, CColl), b / 4.0 / 8e9));
        assert!(close(alloc(cap, 4.0 * b, ReduceScatter, CColl), b / 1e9));
    }

    #[test]
    fn a_kept_subtree_buffer_is_free_to_write_and_a_larger_one_is_fresh() {
        // Blocks of 16 MB: the CPR-P2P Scatter's inner rank decodes its child's one block
        // into its subtree buffer, Gather's its leaf's into one of two blocks. Kept up to
        // 32 MB, both are free; kept up to 16 MB, the Gather's (32 MB) is fresh pages at
        // 1 GB/s again. Nothing else allocates less for it.
        let b = 16e6;
        let base = Params { domain_reduce_bytes_per_s: Some(1e9), ..params(4) };
        let added = |kept_subtree_bytes: f64, op, algo| {
            let p = Params { fresh_bytes_per_s: 1e9, kept_subtree_bytes, ..base };
            time_s(op, algo, b, &p).unwrap() - time_s(op, algo, b, &base).unwrap()
        };
        assert_eq!(added(32e6, Scatter, CprP2p), 0.0);
        assert_eq!(added(32e6, Gather, CprP2p), 0.0);
        assert_eq!(added(16e6, Scatter, CprP2p), 0.0);
        assert!(close(added(16e6, Gather, CprP2p), b / 1e9));
        assert!(close(added(0.0, Scatter, CprP2p), b / 1e9));
        // The other allocations are the call's own whatever the threads keep.
        for (op, algo) in [(ReduceScatter, CprP2p), (Reduce, CColl), (Allreduce, RecursiveDoubling)] {
            assert_eq!(added(1e12, op, algo), added(0.0, op, algo), "{op:?} {algo:?}");
        }
    }

    #[test]
    fn own_blocks_are_copied_where_the_algorithms_copy_them() {
        let b = 16e6;
        let base = Params { domain_reduce_bytes_per_s: Some(1e9), ..params(4) };
        let extra = |op, algo, copy_bytes_per_s| time_s(op, algo, b, &Params { copy_bytes_per_s, ..base }).unwrap() - time_s(op, algo, b, &base).unwrap();
        // Alltoall and Allgather: every rank its own block first (16 ms at 1 GB/s).
        for (op, algo) in [(Alltoall, CprP2p), (Alltoall, CColl), (Allgather, CprP2p), (Allgather, CColl)] {
            assert!(close(extra(op, algo, 1e9), b / 1e9), "{op:?} {algo:?}");
        }
        // C-Coll's Reduce-scatter: its reduced block (a quarter) out of the work buffer.
        assert!(close(extra(ReduceScatter, CColl, 1e9), b / 4.0 / 1e9));
        // CPR-P2P trees: Scatter's root copies its own block out of the caller's input
        // (the inner ranks and the leaves decode theirs into the caller's output);
        // Gather's copies are off its critical path.
        assert!(close(extra(Scatter, CprP2p, 1e9), b / 1e9));
        // C-Coll Scatter: the root copies its block after compressing the others' (32 ms
        // a block, the first two beside its link). A 1.6 ms copy hides while the last
        // block's chunks travel and are decoded; a 160 ms one ends the call.
        assert_eq!(extra(Scatter, CColl, 1e10), 0.0);
        let slow = time_s(Scatter, CColl, b, &Params { copy_bytes_per_s: 1e8, ..base }).unwrap();
        assert!(close(slow, 3.0 * b / 500e6 + b / 1e8), "{slow}");
        for (op, algo) in [(Bcast, CprP2p), (Bcast, CColl), (Allreduce, CprP2p), (Allreduce, CColl), (Gather, CprP2p), (Gather, CColl)] {
            assert_eq!(extra(op, algo, 1e9), 0.0, "{op:?} {algo:?}");
        }
    }

    #[test]
    fn cdr_reduces_compressed_pieces_then_decodes_every_block_once() {
        let n = 64e6;
        let b = n / 4.0;
        // No compressed-domain speed: not priced.
        assert_eq!(time_s(Allreduce, CompressedDomain, n, &params(4)), None);
        let p = Params { domain_reduce_bytes_per_s: Some(1e9), ..params(4) };
        // Reduce-scatter: the first block compressed (32 ms), then 3 steps of compressing
        // the own piece and reducing it with the partial one (32 + 16 ms) against its
        // transfer (12.8 ms). Allgather: decoding the 4 blocks (128 ms) outlasts the link
        // carrying 3 (38.4 ms) and the last chunk's decoding.
        let want = b / 500e6 + 3.0 * (b / 500e6 + b / 1e9) + 4.0 * b / 500e6;
        let got = time_s(Allreduce, CompressedDomain, n, &p).unwrap();
        assert!(close(got, want), "{got} {want}");
        // A slow link: the transfers set the pace (3 x 128 ms + 50 us each way), then
        // the last of 16 chunks is decoded after it arrives.
        let slow = Params { link_bytes_per_s: 12.5e6, ..p };
        let wire = 50e-6 + b / 10.0 / 12.5e6;
        let want = b / 500e6 + 3.0 * wire + 3.0 * wire + b / 16.0 / 500e6;
        let got = time_s(Allreduce, CompressedDomain, n, &slow).unwrap();
        assert!(close(got, want), "{got} {want}");
    }

    #[test]
    fn hierarchical_is_intra_group_steps_around_the_leaders_exchange() {
        // 8 ranks in 2 groups of 4: 2 levels of reduce and bcast inside a group.
        let p = Params { group_ranks: 4, ..params(8) };
        let n = 1e6;
        let intra = 2.0 * (2.0 * (1e-6 + n / 5e9) + n / 2e9);
        let leaders = time_s(Allreduce, CColl, n, &params(2)).unwrap();
        assert!((time_s(Allreduce, Hierarchical, n, &p).unwrap() - intra - leaders).abs() < 1e-12);
        // Raw among the leaders: the ring's two steps of half the vector and one sum.
        let raw = 2.0 * (50e-6 + n / 2.0 / 125e6) + n / 2.0 / 2e9;
        assert!((hier_time_s(n, &p, Mpi) - intra - raw).abs() < 1e-12);
        // The uncompressed path: one partial from the other leader, one reduction.
        let host = intra + (50e-6 + n / 125e6) + n / 2e9;
        assert!((hier_host_time_s(n, &p) - host).abs() < 1e-12);
        // Groups of one rank: no intra-group steps, the leaders are every rank.
        let flat = params(8);
        assert_eq!(time_s(Allreduce, Hierarchical, n, &flat), time_s(Allreduce, CColl, n, &flat));
        assert_eq!(Params { group_ranks: 3, ..params(8) }.groups(), (3, 3));
    }

    #[test]
    fn break_even_lies_where_the_times_cross() {
        let p = params(16);
        let BreakEven::At(bits) = break_even_bits(Bcast, CColl, 64e6, &p, 1.0).unwrap() else { panic!() };
        let q = p.with_link_bits(bits, 1.0);
        let (a, b) = (time_s(Bcast, Mpi, 64e6, &q).unwrap(), time_s(Bcast, CColl, 64e6, &q).unwrap());
        assert!((a - b).abs() / a < 1e-6, "{a} {b} at {bits}");
        // Faster links: plain wins; slower: compressed wins.
        let fast = p.with_link_bits(bits * 2.0, 1.0);
        assert!(time_s(Bcast, Mpi, 64e6, &fast) < time_s(Bcast, CColl, 64e6, &fast));
        // Ratio 1 never pays.
        let no_gain = Params { ratio: 1.0, ..p };
        assert_eq!(break_even_bits(Bcast, CColl, 64e6, &no_gain, 1.0), Some(BreakEven::Never));
    }
}
