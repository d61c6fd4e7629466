# The MPI event source, libocca_tools_mpi.so (runtime/mpi/mpi.c): PMPI
# wrappers that occa-prof --mpi preloads. It is built with the MPI the user
# has, through its compiler wrapper (MPICC=...), since MPI handles and
# constants differ between implementations; without a working one it is
# skipped, saying so, and the MPI tests (tests/mpi) skip with it.
MPICC ?= mpicc
MPI_LIB = $(BUILD)/lib/libocca_tools_mpi.so
MPI_PROGRAM = $(BUILD)/tests/mpi-program
MPI_CHECK = printf '\#include <mpi.h>\nint main(void){return MPI_Init(0, 0);}\n' | \
  $(MPICC) -x c -o /dev/null - >/dev/null 2>&1

.PHONY: mpi-lib mpi-programs
runtime: mpi-lib
test-programs: mpi-programs
mpi-lib:
	@if $(MPI_CHECK); then $(MAKE) --no-print-directory $(MPI_LIB); \
	else echo "mpi-lib: skipped: no working $(MPICC) (apt-get install libopenmpi-dev openmpi-bin)"; fi
mpi-programs: mpi-lib
	@if $(MPI_CHECK); then $(MAKE) --no-print-directory $(MPI_PROGRAM); \
	else echo "mpi-programs: skipped: no working $(MPICC)"; fi

# The library does not link libmpi: LD_PRELOAD puts it into every process
# mpirun starts (shells, compilers), and there libmpi must stay out, both for
# their sake and because the shim traces the processes that contain libmpi.
# objcopy --weaken makes its references to MPI weak, so it loads anywhere
# (even with LD_BIND_NOW) and binds to the program's libmpi where there is one.
$(MPI_LIB): runtime/mpi/mpi.c runtime/include/occa_tools.h runtime/src/ot_internal.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -std=c11 -fPIC -Wall -Wextra -Werror -Iruntime/include -Iruntime/src \
	  -c -o $(@:.so=.o) runtime/mpi/mpi.c
	objcopy --weaken $(@:.so=.o)
	$(CC) -shared -Wl,-soname,libocca_tools_mpi.so -o $@ $(@:.so=.o) -ldl
	rm -f $(@:.so=.o)

$(MPI_PROGRAM): tests/mpi/programs/program.c
	@mkdir -p $(@D)
	$(MPICC) -O2 -g -std=c11 -Wall -Wextra -Werror -o $@ $<

# The MPI tests with MPICH instead of Open MPI (Debian: apt-get install mpich
# libmpich-dev, beside Open MPI): the library and the test program built with
# mpicc.mpich in their own build directory, run under mpirun.mpich.
.PHONY: test-mpich
test-mpich:
	$(MAKE) all test-programs BUILD=build-mpich MPICC=mpicc.mpich
	OCCA_TOOLS_BUILD=$(CURDIR)/build-mpich MPIRUN=mpirun.mpich $(GO) test -count=1 -v ./tests/mpi

# The library's cost per call: tests/mpi/bench.sh (about 30 s).
.PHONY: bench-mpi
bench-mpi: runtime commands test-programs
	tests/mpi/bench.sh $(BUILD)

# The hostile source of tests/mpi (needs no MPI).
MPI_ABI_PROGRAM = $(BUILD)/tests/mpi-abi
test-programs: $(MPI_ABI_PROGRAM)
$(MPI_ABI_PROGRAM): tests/mpi/programs/abi.c runtime/include/occa_tools.h $(BUILD)/lib/libocca_tools.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -Iruntime/include -o $@ $< \
	  -L$(BUILD)/lib -locca_tools -Wl,-rpath,'$$ORIGIN/../lib'
