/* Values of MPI's C macros, for the Rust side (see build.rs). */
#include <mpi.h>

void *const ccoll_mpi_in_place = MPI_IN_PLACE;
