//! `libccoll_mpi.so`: the compressed collectives for MPI programs that know nothing of
//! them. Loaded with `LD_PRELOAD`, it defines `MPI_Allreduce`, `MPI_Reduce`,
//! `MPI_Reduce_scatter_block`, `MPI_Bcast`, `MPI_Scatter`, `MPI_Gather`,
//! `MPI_Allgather` and `MPI_Alltoall` (the PMPI profiling interface; their Fortran
//! bindings too, see `fortran`), runs the large
//! `MPI_FLOAT`/`MPI_DOUBLE` calls with predefined operators through the `collectives`
//! crate, compressed with the codec of `CCOLL_CODEC`, and passes every other call to
//! its `PMPI_` function unchanged. `MPI_Init` checks that every rank has the same
//! `CCOLL_*` settings; `MPI_Finalize` prints the report (`CCOLL_REPORT=1`).
//!
//! See `docs/drop-in.md` for the variables, the report and what is never compressed.

/// Prints one line to stderr in a single write, so that the lines of ranks sharing a
/// terminal or a pipe do not interleave mid-line.
macro_rules! say {
    ($($fmt:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($fmt)*);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }};
}

/// Calls `compressed::$f::<T>` with `T` the plan's element type (for the C and the
/// Fortran entry points).
macro_rules! typed {
    ($plan:expr, $f:ident($($arg:expr),*)) => {
        match $plan.elem {
            $crate::ops::Elem::F32 => $crate::compressed::$f::<f32>($plan, $($arg),*),
            $crate::ops::Elem::F64 => $crate::compressed::$f::<f64>($plan, $($arg),*),
        }
    };
}

mod c_api;
mod compressed;
mod fortran;
mod guard;
mod lifecycle;
pub mod ops;
pub mod report;
mod route;
pub mod settings;
