//! The Fortran entry points.
//!
//! Open MPI's Fortran bindings do not reach the C `MPI_*` symbols: `mpi_allreduce_`
//! (mpif.h and `use mpi`) is Open MPI's `ompi_allreduce_f`, which calls
//! `PMPI_Allreduce`, and `use mpi_f08`'s `mpi_allreduce_f08_` calls `ompi_allreduce_f`
//! too (see `docs/drop-in.md`). So the library also defines, for `MPI_Init`,
//! `MPI_Init_thread`, `MPI_Finalize` and the eight collectives, the gfortran name
//! (`mpi_allreduce_`) and Open MPI's shared implementation name (`ompi_allreduce_f`,
//! reached by `use mpi_f08`). Each converts the Fortran handles to C ones and takes the
//! same route as a C call; a call MPI runs goes to Open MPI's own Fortran function
//! (`pmpi_allreduce_`) with the caller's arguments untouched.
//!
//! The Fortran functions live in `libmpi_mpifh`, which a C program does not load, so
//! they are looked up when first called rather than linked.

// The functions take MPI's arguments, as many as the bindings have.
#![allow(clippy::too_many_arguments)]

use core::ffi::{c_int, c_void, CStr};
use core::ptr::null_mut;
use std::sync::OnceLock;

use mpi::ffi;

use crate::compressed::Movement;
use crate::lifecycle;
use crate::ops::Collective;
use crate::route::{route, Desc, Plan, Ran, UserComm};

/// The address of a symbol of the running program, if it has one.
fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Open MPI's Fortran function `name`, looked up once.
macro_rules! open_mpi_fortran {
    ($name:literal: fn($($arg:ty),*)) => {{
        static FUNCTION: OnceLock<usize> = OnceLock::new();
        let address = *FUNCTION.get_or_init(|| {
            symbol($name).unwrap_or_else(|| panic!("{:?} not found: a Fortran MPI program without Open MPI's libmpi_mpifh", $name)) as usize
        });
        // SAFETY: Open MPI's Fortran binding of that name has this signature.
        unsafe { core::mem::transmute::<usize, unsafe extern "C" fn($($arg),*)>(address) }
    }};
}

/// The buffer a Fortran caller means: `MPI_IN_PLACE` and `MPI_BOTTOM` arrive as the
/// addresses of Open MPI's Fortran sentinels (common blocks), under any of the names its
/// bindings accept.
fn buffer(p: *mut c_void) -> Option<*mut c_void> {
    static SENTINELS: OnceLock<[Vec<usize>; 2]> = OnceLock::new();
    let [in_place, bottom] = SENTINELS.get_or_init(|| {
        let find = |names: [&CStr; 4]| names.into_iter().filter_map(symbol).map(|a| a as usize).collect();
        [
            find([c"mpi_fortran_in_place_", c"mpi_fortran_in_place", c"mpi_fortran_in_place__", c"MPI_FORTRAN_IN_PLACE"]),
            find([c"mpi_fortran_bottom_", c"mpi_fortran_bottom", c"mpi_fortran_bottom__", c"MPI_FORTRAN_BOTTOM"]),
        ]
    });
    if in_place.contains(&(p as usize)) {
        Some(crate::ops::in_place())
    } else if bottom.contains(&(p as usize)) {
        // MPI_BOTTOM: absolute addresses in a derived datatype; MPI runs those calls.
        None
    } else {
        Some(p)
    }
}

/// A Fortran call's handles, converted to C.
struct Converted {
    comm: ffi::MPI_Comm,
    datatype: ffi::MPI_Datatype,
    op: Option<ffi::MPI_Op>,
}

unsafe fn convert(comm: *const Fint, datatype: *const Fint, op: Option<*const Fint>) -> Converted {
    Converted { comm: ffi::PMPI_Comm_f2c(*comm), datatype: ffi::PMPI_Type_f2c(*datatype), op: op.map(|o| ffi::PMPI_Op_f2c(*o)) }
}

/// Runs a Fortran collective (`desc` is `None` where a buffer is `MPI_BOTTOM`, never
/// compressed): `pass` calls Open MPI's Fortran function with the caller's arguments
/// (which sets `ierr`).
unsafe fn run_fortran(
    desc: Option<Desc>,
    ierr: *mut Fint,
    pass: impl FnOnce(),
    run: impl FnOnce(&Plan, &UserComm) -> Ran,
) {
    let Some(desc) = desc else { return pass() };
    let mut passed = false;
    let rc = route(
        desc,
        || {
            pass();
            passed = true;
            0
        },
        run,
    );
    if !passed && !ierr.is_null() {
        *ierr = rc;
    }
}

/// Defines the gfortran symbol and Open MPI's implementation symbol of a binding, both
/// with the body of `$inner`.
macro_rules! exports {
    ($inner:ident, [$gfortran:ident, $ompi:ident], ($($arg:ident: $ty:ty),*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $gfortran($($arg: $ty),*) {
            $inner($($arg),*)
        }
        #[no_mangle]
        pub unsafe extern "C" fn $ompi($($arg: $ty),*) {
            $inner($($arg),*)
        }
    };
}

/// Open MPI's `MPI_Fint`: a default Fortran INTEGER, a C int with gfortran.
type Fint = c_int;
type Buf = *mut c_void;
type Int = *const Fint;
type Ierr = *mut Fint;

unsafe fn init(ierr: Ierr) {
    open_mpi_fortran!(c"pmpi_init_": fn(Ierr))(ierr);
    if *ierr == ffi::MPI_SUCCESS as Fint {
        lifecycle::after_init();
    }
}
exports!(init, [mpi_init_, ompi_init_f], (ierr: Ierr));

unsafe fn init_thread(required: Int, provided: *mut Fint, ierr: Ierr) {
    open_mpi_fortran!(c"pmpi_init_thread_": fn(Int, *mut Fint, Ierr))(required, provided, ierr);
    if *ierr == ffi::MPI_SUCCESS as Fint {
        lifecycle::after_init();
    }
}
exports!(init_thread, [mpi_init_thread_, ompi_init_thread_f], (required: Int, provided: *mut Fint, ierr: Ierr));

unsafe fn finalize(ierr: Ierr) {
    lifecycle::before_finalize();
    open_mpi_fortran!(c"pmpi_finalize_": fn(Ierr))(ierr);
}
exports!(finalize, [mpi_finalize_, ompi_finalize_f], (ierr: Ierr));

unsafe fn allreduce(sendbuf: Buf, recvbuf: Buf, count: Int, datatype: Int, op: Int, comm: Int, ierr: Ierr) {
    let c = convert(comm, datatype, Some(op));
    let bufs = buffer(sendbuf).zip(buffer(recvbuf));
    let desc = bufs.map(|_| Desc { coll: Collective::Allreduce, comm: c.comm, datatype: c.datatype, count: *count, op: c.op });
    let (send, recv) = bufs.unwrap_or((null_mut(), null_mut()));
    run_fortran(
        desc,
        ierr,
        || open_mpi_fortran!(c"pmpi_allreduce_": fn(Buf, Buf, Int, Int, Int, Int, Ierr))(sendbuf, recvbuf, count, datatype, op, comm, ierr),
        |plan, comm| typed!(plan, allreduce(comm, send, recv)),
    )
}
exports!(allreduce, [mpi_allreduce_, ompi_allreduce_f], (sendbuf: Buf, recvbuf: Buf, count: Int, datatype: Int, op: Int, comm: Int, ierr: Ierr));

unsafe fn reduce(sendbuf: Buf, recvbuf: Buf, count: Int, datatype: Int, op: Int, root: Int, comm: Int, ierr: Ierr) {
    let c = convert(comm, datatype, Some(op));
    let bufs = buffer(sendbuf).zip(buffer(recvbuf));
    let desc = bufs.map(|_| Desc { coll: Collective::Reduce, comm: c.comm, datatype: c.datatype, count: *count, op: c.op });
    let (send, recv) = bufs.unwrap_or((null_mut(), null_mut()));
    run_fortran(
        desc,
        ierr,
        || open_mpi_fortran!(c"pmpi_reduce_": fn(Buf, Buf, Int, Int, Int, Int, Int, Ierr))(sendbuf, recvbuf, count, datatype, op, root, comm, ierr),
        |plan, comm| typed!(plan, reduce(comm, send, recv, *root)),
    )
}
exports!(reduce, [mpi_reduce_, ompi_reduce_f], (sendbuf: Buf, recvbuf: Buf, count: Int, datatype: Int, op: Int, root: Int, comm: Int, ierr: Ierr));

unsafe fn reduce_scatter_block(sendbuf: Buf, recvbuf: Buf, recvcount: Int, datatype: Int, op: Int, comm: Int, ierr: Ierr) {
    let c = convert(comm, datatype, Some(op));
    let bufs = buffer(sendbuf).zip(buffer(recvbuf));
    let desc = bufs.map(|_| Desc { coll: Collective::ReduceScatterBlock, comm: c.comm, datatype: c.datatype, count: *recvcount, op: c.op });
    let (send, recv) = bufs.unwrap_or((null_mut(), null_mut()));
    run_fortran(
        desc,
        ierr,
        || {
            open_mpi_fortran!(c"pmpi_reduce_scatter_block_": fn(Buf, Buf, Int, Int, Int, Int, Ierr))(sendbuf, recvbuf, recvcount, datatype, op, comm, ierr)
        },
        |plan, comm| typed!(plan, reduce_scatter_block(comm, send, recv)),
    )
}
exports!(
    reduce_scatter_block,
    [mpi_reduce_scatter_block_, ompi_reduce_scatter_block_f],
    (sendbuf: Buf, recvbuf: Buf, recvcount: Int, datatype: Int, op: Int, comm: Int, ierr: Ierr)
);

unsafe fn bcast(buf: Buf, count: Int, datatype: Int, root: Int, comm: Int, ierr: Ierr) {
    let c = convert(comm, datatype, None);
    let data = buffer(buf);
    let desc = data.map(|_| Desc { coll: Collective::Bcast, comm: c.comm, datatype: c.datatype, count: *count, op: None });
    run_fortran(
        desc,
        ierr,
        || open_mpi_fortran!(c"pmpi_bcast_": fn(Buf, Int, Int, Int, Int, Ierr))(buf, count, datatype, root, comm, ierr),
        |plan, comm| typed!(plan, bcast(comm, data.unwrap_or(null_mut()), *root)),
    )
}
exports!(bcast, [mpi_bcast_, ompi_bcast_f], (buf: Buf, count: Int, datatype: Int, root: Int, comm: Int, ierr: Ierr));

/// Scatter, gather, allgather and alltoall share their Fortran signature (plus a root).
unsafe fn movement_call(
    coll: Collective,
    args: (Buf, Int, Int, Buf, Int, Int),
    root: Option<Int>,
    comm: Int,
    ierr: Ierr,
    pass: impl FnOnce(),
) {
    let (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype) = args;
    let c_comm = ffi::PMPI_Comm_f2c(*comm);
    let bufs = buffer(sendbuf).zip(buffer(recvbuf));
    let (send, recv) = bufs.unwrap_or((null_mut(), null_mut()));
    let m = Movement {
        send,
        send_count: *sendcount,
        send_type: ffi::PMPI_Type_f2c(*sendtype),
        recv,
        recv_count: *recvcount,
        recv_type: ffi::PMPI_Type_f2c(*recvtype),
    };
    let root = root.map(|r| *r);
    let desc = bufs.map(|_| m.desc(coll, c_comm, root));
    run_fortran(desc, ierr, pass, |plan, comm| match (coll, root) {
        (Collective::Scatter, Some(r)) => typed!(plan, scatter(comm, &m, r)),
        (Collective::Gather, Some(r)) => typed!(plan, gather(comm, &m, r)),
        (Collective::Allgather, _) => typed!(plan, allgather(comm, &m)),
        _ => typed!(plan, alltoall(comm, &m)),
    })
}

unsafe fn scatter(sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, root: Int, comm: Int, ierr: Ierr) {
    let args = (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    movement_call(Collective::Scatter, args, Some(root), comm, ierr, || {
        open_mpi_fortran!(c"pmpi_scatter_": fn(Buf, Int, Int, Buf, Int, Int, Int, Int, Ierr))(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr,
        )
    })
}
exports!(
    scatter,
    [mpi_scatter_, ompi_scatter_f],
    (sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, root: Int, comm: Int, ierr: Ierr)
);

unsafe fn gather(sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, root: Int, comm: Int, ierr: Ierr) {
    let args = (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    movement_call(Collective::Gather, args, Some(root), comm, ierr, || {
        open_mpi_fortran!(c"pmpi_gather_": fn(Buf, Int, Int, Buf, Int, Int, Int, Int, Ierr))(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr,
        )
    })
}
exports!(
    gather,
    [mpi_gather_, ompi_gather_f],
    (sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, root: Int, comm: Int, ierr: Ierr)
);

unsafe fn allgather(sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, comm: Int, ierr: Ierr) {
    let args = (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    movement_call(Collective::Allgather, args, None, comm, ierr, || {
        open_mpi_fortran!(c"pmpi_allgather_": fn(Buf, Int, Int, Buf, Int, Int, Int, Ierr))(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr,
        )
    })
}
exports!(
    allgather,
    [mpi_allgather_, ompi_allgather_f],
    (sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, comm: Int, ierr: Ierr)
);

unsafe fn alltoall(sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, comm: Int, ierr: Ierr) {
    let args = (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    movement_call(Collective::Alltoall, args, None, comm, ierr, || {
        open_mpi_fortran!(c"pmpi_alltoall_": fn(Buf, Int, Int, Buf, Int, Int, Int, Ierr))(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr,
        )
    })
}
exports!(
    alltoall,
    [mpi_alltoall_, ompi_alltoall_f],
    (sendbuf: Buf, sendcount: Int, sendtype: Int, recvbuf: Buf, recvcount: Int, recvtype: Int, comm: Int, ierr: Ierr)
);
