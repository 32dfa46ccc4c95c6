//! The re-entrancy guard: the library's own communication never reaches its own
//! interposed symbols.
//!
//! The compressed collectives run on rsmpi, which calls `MPI_Allreduce`, `MPI_Bcast`, ...
//! by their `MPI_` names; inside this library (and under `LD_PRELOAD`) those names
//! resolve to the interposed functions of `c_api`. A thread-local flag, set while a
//! compressed call runs, sends every such nested call straight to its `PMPI_` twin.
//! Per thread, because under `MPI_THREAD_MULTIPLE` another thread's call of the
//! application must still be intercepted while this one is inside the library. (The
//! alternative, rewriting the collectives' transport to call `PMPI_` directly, would
//! change the collectives crate for the sake of one client and miss rsmpi's own calls.)

use std::cell::Cell;

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// True while this thread runs a compressed call: intercepted calls are the library's
/// own and go to `PMPI_`.
pub fn inside() -> bool {
    INSIDE.with(Cell::get)
}

/// Marks this thread as inside the library until dropped.
pub struct Inside(());

impl Inside {
    pub fn enter() -> Inside {
        INSIDE.with(|c| c.set(true));
        Inside(())
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|c| c.set(false));
    }
}
