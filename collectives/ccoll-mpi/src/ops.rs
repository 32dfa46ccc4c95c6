//! What the library intercepts: the collectives, the reduction operators and element
//! types it can compress, recognised from MPI handles.

use core::ffi::c_void;
use core::fmt;

use collectives::ReduceOp;
use mpi::ffi;

/// The intercepted collectives, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    Allreduce,
    Reduce,
    ReduceScatterBlock,
    Bcast,
    Scatter,
    Gather,
    Allgather,
    Alltoall,
}

impl Collective {
    pub const ALL: [Collective; 8] = [
        Collective::Allreduce,
        Collective::Reduce,
        Collective::ReduceScatterBlock,
        Collective::Bcast,
        Collective::Scatter,
        Collective::Gather,
        Collective::Allgather,
        Collective::Alltoall,
    ];

    /// The name in `CCOLL_OPS` and the report: the MPI function's, lower case, without
    /// `MPI_`.
    pub const fn name(self) -> &'static str {
        match self {
            Collective::Allreduce => "allreduce",
            Collective::Reduce => "reduce",
            Collective::ReduceScatterBlock => "reduce_scatter_block",
            Collective::Bcast => "bcast",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Allgather => "allgather",
            Collective::Alltoall => "alltoall",
        }
    }
}

/// The predefined reduction operators that can be compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Sum,
    Min,
    Max,
    Prod,
}

impl Operator {
    pub const ALL: [Operator; 4] = [Operator::Sum, Operator::Min, Operator::Max, Operator::Prod];

    /// The name in `CCOLL_OPS`.
    pub const fn name(self) -> &'static str {
        match self {
            Operator::Sum => "sum",
            Operator::Min => "min",
            Operator::Max => "max",
            Operator::Prod => "prod",
        }
    }

    /// The operator behind an MPI handle (`None`: not one of the four predefined ones).
    pub fn of(op: ffi::MPI_Op) -> Option<Operator> {
        // SAFETY: reading rsmpi's extern handle constants.
        let known = unsafe { [(ffi::RSMPI_SUM, Operator::Sum), (ffi::RSMPI_MIN, Operator::Min), (ffi::RSMPI_MAX, Operator::Max), (ffi::RSMPI_PROD, Operator::Prod)] };
        known.iter().find(|(h, _)| *h == op).map(|&(_, o)| o)
    }

    pub const fn reduce_op(self) -> ReduceOp {
        match self {
            Operator::Sum => ReduceOp::Sum,
            Operator::Min => ReduceOp::Min,
            Operator::Max => ReduceOp::Max,
            Operator::Prod => ReduceOp::Prod,
        }
    }
}

/// The element types that can be compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    F64,
}

impl Elem {
    /// The element type of a datatype handle: only the predefined `MPI_FLOAT` and
    /// `MPI_DOUBLE` themselves (contiguous by definition) and their Fortran twins
    /// (`MPI_REAL`, `MPI_REAL4`; `MPI_DOUBLE_PRECISION`, `MPI_REAL8`) where their size
    /// matches; duplicates, derived types and every other type are `None`.
    pub fn of(datatype: ffi::MPI_Datatype) -> Option<Elem> {
        // SAFETY: reading extern handle constants (rsmpi's and `mpi_constants.c`'s).
        let (f32s, f64s) = unsafe {
            let [real, real4] = ccoll_mpi_fortran_f32;
            let [double_precision, real8] = ccoll_mpi_fortran_f64;
            ([ffi::RSMPI_FLOAT, real, real4], [ffi::RSMPI_DOUBLE, double_precision, real8])
        };
        let elem = if f32s.contains(&datatype) {
            Elem::F32
        } else if f64s.contains(&datatype) {
            Elem::F64
        } else {
            return None;
        };
        let mut size = 0;
        // SAFETY: a local query on a predefined datatype.
        unsafe { ffi::PMPI_Type_size(datatype, &mut size) };
        (usize::try_from(size) == Ok(elem.size())).then_some(elem)
    }

    pub const fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Elem::F32 => "float",
            Elem::F64 => "double",
        })
    }
}

extern "C" {
    /// `MPI_IN_PLACE`, from `mpi_constants.c`.
    static ccoll_mpi_in_place: *mut c_void;
    /// `MPI_REAL`, `MPI_REAL4`.
    static ccoll_mpi_fortran_f32: [ffi::MPI_Datatype; 2];
    /// `MPI_DOUBLE_PRECISION`, `MPI_REAL8`.
    static ccoll_mpi_fortran_f64: [ffi::MPI_Datatype; 2];
}

/// `MPI_IN_PLACE`.
pub fn in_place() -> *mut c_void {
    // SAFETY: an immutable pointer constant defined in C.
    unsafe { ccoll_mpi_in_place }
}

/// True if `buf` is `MPI_IN_PLACE`.
pub fn is_in_place(buf: *const c_void) -> bool {
    buf == in_place().cast_const()
}

/// True if this rank is `root` of `comm`.
pub fn is_root(comm: ffi::MPI_Comm, root: i32) -> bool {
    let mut rank = -1;
    // SAFETY: a local query on the caller's communicator.
    unsafe { ffi::PMPI_Comm_rank(comm, &mut rank) };
    rank == root
}

/// True if `comm` is an intra-communicator.
pub fn is_intra(comm: ffi::MPI_Comm) -> bool {
    let mut inter = 0;
    // SAFETY: `comm` is the caller's communicator handle; an invalid one makes the call
    // fail, and the collective is then left to MPI, which reports it.
    let rc = unsafe { ffi::PMPI_Comm_test_inter(comm, &mut inter) };
    rc == ffi::MPI_SUCCESS as i32 && inter == 0
}

/// Rank and size of an intra-communicator.
pub fn rank_and_size(comm: ffi::MPI_Comm) -> (i32, i32) {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: `comm` is a valid intra-communicator (checked by `is_intra`).
    unsafe {
        ffi::PMPI_Comm_rank(comm, &mut rank);
        ffi::PMPI_Comm_size(comm, &mut size);
    }
    (rank, size)
}
