/* Values of MPI's C macros, for the Rust side (see build.rs). */
#include <mpi.h>

void *const ccoll_mpi_in_place = MPI_IN_PLACE;

/* The Fortran floating-point types, whose C handles differ from MPI_FLOAT and
 * MPI_DOUBLE (a Fortran program's MPI_REAL arrives here as the handle of MPI_REAL). */
MPI_Datatype const ccoll_mpi_fortran_f32[] = {MPI_REAL, MPI_REAL4};
MPI_Datatype const ccoll_mpi_fortran_f64[] = {MPI_DOUBLE_PRECISION, MPI_REAL8};
