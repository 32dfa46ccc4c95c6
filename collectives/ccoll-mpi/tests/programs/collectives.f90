! An ordinary Fortran MPI program (`use mpi`, or `use mpi_f08` when built with
! -DF08) that knows nothing of libccoll_mpi.so.
!
!   collectives_f TOL N
!
! MPI_ALLREDUCE (SUM, also with MPI_IN_PLACE), MPI_BCAST and MPI_ALLTOALL on N REAL and
! N DOUBLE PRECISION values per block, and an INTEGER MPI_ALLREDUCE; each rank checks its
! results against the exact ones (float within TOL, integer exactly). Rank 0 prints
! "case NAME TYPE maxerr=E" per case and "failures=F"; the exit status is 1 on failure.
program collectives_f
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: rank, nranks, ierr, n, i, r, failures
  double precision :: tol
  character(len=32) :: arg
  real, allocatable :: a4(:), b4(:)
  double precision, allocatable :: a8(:), b8(:), want(:)
  integer, allocatable :: ai(:), bi(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, arg)
  read (arg, *) tol
  call get_command_argument(2, arg)
  read (arg, *) n
  failures = 0
  allocate (a4(n * nranks), b4(n * nranks), a8(n * nranks), b8(n * nranks), want(n * nranks))
  allocate (ai(n), bi(n))

  ! Allreduce SUM.
  do i = 1, n
    a8(i) = value(rank, i)
    a4(i) = real(a8(i))
    want(i) = sum([(value(r, i), r = 0, nranks - 1)])
  end do
  call MPI_Allreduce(a4, b4, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce-sum', 'real', maxval(abs(dble(b4(1:n)) - want(1:n))))
  call MPI_Allreduce(a8, b8, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce-sum', 'double', maxval(abs(b8(1:n) - want(1:n))))
  b8(1:n) = a8(1:n)
  call MPI_Allreduce(MPI_IN_PLACE, b8, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce-sum-inplace', 'double', maxval(abs(b8(1:n) - want(1:n))))

  ! Bcast from the last rank.
  do i = 1, n
    want(i) = value(nranks - 1, i)
    b4(i) = 0
    if (rank == nranks - 1) b4(i) = real(want(i))
  end do
  call MPI_Bcast(b4, n, MPI_REAL, nranks - 1, MPI_COMM_WORLD, ierr)
  call check('bcast', 'real', maxval(abs(dble(b4(1:n)) - want(1:n))))

  ! Alltoall: block d of rank s holds value(s, d*n + i); rank d receives it as block s.
  do i = 1, n * nranks
    a8(i) = value(rank, i)
    want(i) = value((i - 1) / n, rank * n + mod(i - 1, n) + 1)
  end do
  call MPI_Alltoall(a8, n, MPI_DOUBLE_PRECISION, b8, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check('alltoall', 'double', maxval(abs(b8 - want)))

  ! Integers: MPI runs them, exactly.
  ai = [(mod(i, 1000) * (rank + 1), i = 1, n)]
  call MPI_Allreduce(ai, bi, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce-sum', 'integer', dble(maxval(abs(bi - [(mod(i, 1000) * nranks * (nranks + 1) / 2, i = 1, n)]))))

  if (rank == 0) print '(a, i0)', 'failures=', failures
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

  double precision function value(r, i)
    integer, intent(in) :: r, i
    value = sin(0.001d0 * (i - 1) + 0.7d0 * r) + 0.25d0 * r
  end function

  subroutine check(name, kind, err)
    character(len=*), intent(in) :: name, kind
    double precision, intent(in) :: err
    double precision :: worst, limit
    call MPI_Allreduce(err, worst, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a, 1x, a, 1x, a, es10.3)', 'case ' // name, kind, 'maxerr=', worst
    limit = tol
    if (kind == 'integer') limit = 0
    if (.not. (worst <= limit)) failures = failures + 1
  end subroutine
end program
