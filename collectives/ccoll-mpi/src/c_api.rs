//! The interposed C symbols. Each builds the description its decision needs and hands
//! `route` two ways to run: the `PMPI_` call with the caller's exact arguments, and the
//! compressed call.

use core::ffi::{c_char, c_int, c_void};

use mpi::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Op};

use crate::compressed::Movement;
use crate::lifecycle;
use crate::ops::Collective;
use crate::route::{route, Desc};

#[no_mangle]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    let rc = ffi::PMPI_Init(argc, argv);
    if rc == ffi::MPI_SUCCESS as c_int {
        lifecycle::after_init();
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
    let rc = ffi::PMPI_Init_thread(argc, argv, required, provided);
    if rc == ffi::MPI_SUCCESS as c_int {
        lifecycle::after_init();
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    lifecycle::before_finalize();
    ffi::PMPI_Finalize()
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let desc = Desc { coll: Collective::Allreduce, comm, datatype, count, op: Some(op) };
    route(
        desc,
        || ffi::PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm),
        |plan, c| typed!(plan, allreduce(c, sendbuf, recvbuf)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let desc = Desc { coll: Collective::Reduce, comm, datatype, count, op: Some(op) };
    route(
        desc,
        || ffi::PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm),
        |plan, c| typed!(plan, reduce(c, sendbuf, recvbuf, root)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let desc = Desc { coll: Collective::ReduceScatterBlock, comm, datatype, count: recvcount, op: Some(op) };
    route(
        desc,
        || ffi::PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm),
        |plan, c| typed!(plan, reduce_scatter_block(c, sendbuf, recvbuf)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    let desc = Desc { coll: Collective::Bcast, comm, datatype, count, op: None };
    route(desc, || ffi::PMPI_Bcast(buffer, count, datatype, root, comm), |plan, c| typed!(plan, bcast(c, buffer, root)))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Movement { send: sendbuf, send_count: sendcount, send_type: sendtype, recv: recvbuf, recv_count: recvcount, recv_type: recvtype };
    let desc = m.desc(Collective::Scatter, comm, Some(root));
    route(
        desc,
        || ffi::PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
        |plan, c| typed!(plan, scatter(c, &m, root)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Movement { send: sendbuf, send_count: sendcount, send_type: sendtype, recv: recvbuf, recv_count: recvcount, recv_type: recvtype };
    let desc = m.desc(Collective::Gather, comm, Some(root));
    route(
        desc,
        || ffi::PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
        |plan, c| typed!(plan, gather(c, &m, root)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let m = Movement { send: sendbuf, send_count: sendcount, send_type: sendtype, recv: recvbuf, recv_count: recvcount, recv_type: recvtype };
    let desc = m.desc(Collective::Allgather, comm, None);
    route(
        desc,
        || ffi::PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
        |plan, c| typed!(plan, allgather(c, &m)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let m = Movement { send: sendbuf, send_count: sendcount, send_type: sendtype, recv: recvbuf, recv_count: recvcount, recv_type: recvtype };
    let desc = m.desc(Collective::Alltoall, comm, None);
    route(
        desc,
        || ffi::PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
        |plan, c| typed!(plan, alltoall(c, &m)),
    )
}
