//! Compiles `src/mpi_constants.c` against the MPI headers that mpi-sys uses, for the
//! constants that are C macros (rsmpi exports the handles, not `MPI_IN_PLACE`).

fn main() {
    let mpi = build_probe_mpi::probe().unwrap_or_else(|errors| panic!("no MPI installation found: {errors:?}"));
    let mut build = cc::Build::new();
    build.file("src/mpi_constants.c");
    for dir in &mpi.include_paths {
        build.include(dir);
    }
    build.compile("ccoll_mpi_constants");
    println!("cargo:rerun-if-changed=src/mpi_constants.c");
}
