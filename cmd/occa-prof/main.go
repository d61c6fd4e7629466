// Occa-prof traces an unmodified OCCA application.
//
// Usage:
//
//	occa-prof [--config FILE] [--output DIR] [--quiet] [--device-time] [--mpi] [--] PROGRAM [ARGS...]
//
// It runs PROGRAM with the occa-tools runtime preloaded, waits for it, and
// prints where the traces went and a per-kernel table. Run "occa-prof --help"
// for the details.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/libocca/occa-tools/runtime/procinfo"
)

// Version is set at build time (-ldflags "-X main.Version=...").
var Version = "dev"

// Exit statuses of occa-prof's own failures, as shells use them.
const (
	exitUsage       = 2   // bad command line, missing config, broken installation
	exitNotExecable = 126 // the program exists but cannot be run
	exitNotFound    = 127 // the program is not found
)

const help = `usage: occa-prof [options] [--] PROGRAM [ARGS...]

Runs PROGRAM, an OCCA application that need not be changed or rebuilt, with
the occa-tools runtime, waits for it, and prints where its traces went and a
per-kernel table (calls, total and average host time).

Options:
  --config FILE    the occa-tools config (TOML); default: the installed
                   default.toml (share/occa-tools/configs/default.toml, or
                   configs/default.toml of the source tree)
  --output DIR     the directory for the traces, created if missing; it
                   overrides the config's output.directory
                   (default ./occa-tools-traces, made absolute)
  --device-time    ask for device-side kernel times (events.device_time =
                   true): occa-prof writes a temporary copy of the config
                   with that key set and removes it when PROGRAM ends
  --mpi            record MPI calls too (the config's mpi domain): preload
                   lib/libocca_tools_mpi.so and trace every process that
                   contains libmpi, OCCA or not (see MPI below)
  --quiet          print nothing of its own (errors excepted)
  --version        print occa-prof's version and exit
  -h, --help       print this help and exit

How it works: occa-prof sets, for PROGRAM and all its children,
  OCCA_TOOLS_CONFIG      the config file (absolute)
  OCCA_TOOLS_OUTPUT_DIR  the output directory (absolute)
  LD_PRELOAD             lib/libocca_tools_occa.so and
                         lib/libocca_tools_preload.so, before any LD_PRELOAD
                         already set
The first, the OCCA adapter, catches OCCA's calls (device setup, malloc,
copies, builds, launches, streams, finish) by interposing libocca's
exported functions. The second, a shim, starts the runtime
(lib/libocca_tools.so.1) only in processes that contain libocca (a library
named libocca.so*): OCCA's JIT compiler, shells and other helpers run
untraced and unchanged. A program that dlopens libocca later is traced from
its first OCCA call. Programs that link libocca_tools themselves are
traced by their own copy.

OpenMP: with LLVM's OpenMP runtime (libomp) the runtime is also an OMPT
tool and records parallel regions, threads, barriers and tasks inside the
kernel launches it traces ([openmp] in the config; for OCCA's OpenMP mode
let OCCA compile with clang: OCCA_CXX=clang++ occa-prof ./app).

PROGRAM runs in occa-prof's process group. SIGINT, SIGTERM, SIGHUP,
SIGQUIT, SIGUSR1 and SIGUSR2 sent to occa-prof are passed on to it, but
not those that reached PROGRAM already: SIGINT, SIGQUIT and SIGHUP from
the terminal (Ctrl-C, Ctrl-\, a hangup) while the two run in its
foreground, and every signal in a Slurm task (slurmstepd signals each
process of the step). A signal sent otherwise to the whole process group
(kill -- -PGID, timeout(1)) reaches PROGRAM twice.

Exit status: PROGRAM's. When PROGRAM dies of a signal, occa-prof kills
itself with the same signal (without a core dump), as timeout(1) does, so
the caller sees the same end. occa-prof's own errors: 2 for a bad command
line, a missing config or a broken installation, 127 when PROGRAM is not
found, 126 when it cannot be executed.

Traces: files named <exe>-<host>-r<rank>-p<pid>.occatrace by default. After
PROGRAM ends, occa-prof lists the files of the output directory that this
run created (new names, or files written since occa-prof started) and
summarizes their kernel launches.

Crashes: when PROGRAM dies of a signal (an uncaught exception ends in
abort() and SIGABRT), the runtime writes the trace out before it dies, and
occa-prof prints one warning line saying so and the table of the launches
up to the crash. A trace that was cut short (SIGKILL, or a crash the runtime
could not see) is read as far as it goes, with a warning naming it.

MPI: run it under the launcher, one occa-prof per rank:
  mpirun -n 4 occa-prof ./app
Each rank's traces carry its rank (from OMPI_COMM_WORLD_RANK, PMIX_RANK,
PMI_RANK, MV2_COMM_WORLD_RANK, PALS_RANKID, SLURM_PROCID or FLUX_TASK_RANK).
Only rank 0 prints: every file created in the output directory since it
started (it waits up to 2 s for one file per rank), and the table of its own
traces. Use one output directory per job.

With --mpi (mpirun -n 4 occa-prof --mpi ./app) the PMPI library
lib/libocca_tools_mpi.so records point-to-point calls, non-blocking requests
and their completion, collectives, communicator creation, MPI_Init and
MPI_Finalize, and each rank's clock offset to rank 0 at init and finalize.
It is opt-in because it must match the program's MPI (it is built with the
mpicc found when occa-tools was built: an Open MPI build cannot serve an
MPICH program), and because it wraps every MPI call of the program; the
library is missing when occa-tools was built without mpicc.

Examples:
  occa-prof ./app --device "{mode: 'Serial'}"
  occa-prof --output /scratch/traces --device-time ./app
  mpirun -n 4 occa-prof --quiet ./app
  occa-tools summary occa-tools-traces/
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options is the parsed command line.
type options struct {
	config     string
	output     string
	quiet      bool
	deviceTime bool
	mpi        bool
	version    bool
	argv       []string // PROGRAM and its arguments
}

// parseArgs parses occa-prof's flags; they stop at "--" or at the first
// word that is not a flag (PROGRAM). It returns flag.ErrHelp for --help.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("occa-prof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.config, "config", "", "")
	fs.StringVar(&o.output, "output", "", "")
	fs.BoolVar(&o.quiet, "quiet", false, "")
	fs.BoolVar(&o.deviceTime, "device-time", false, "")
	fs.BoolVar(&o.mpi, "mpi", false, "")
	fs.BoolVar(&o.version, "version", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.argv = fs.Args()
	if o.version {
		return o, nil
	}
	if len(o.argv) == 0 {
		return nil, errors.New("no program to run")
	}
	return o, nil
}

// run is occa-prof; it returns the exit status, or does not return when
// the program died of a signal.
func run(args []string, stdout, stderr io.Writer) int {
	start := time.Now()
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, help)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: %v\nusage: occa-prof [--config FILE] [--output DIR] [--quiet] [--device-time] [--mpi] [--] PROGRAM [ARGS...]\nRun 'occa-prof --help' for details.\n", err)
		return exitUsage
	}
	if o.version {
		fmt.Fprintf(stdout, "occa-prof %s\n", Version)
		return 0
	}

	inst, err := locate()
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: %v\n", err)
		return exitUsage
	}
	cfg, cleanup, err := configFile(o, inst)
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: %v\n", err)
		return exitUsage
	}
	defer cleanup()

	outDir := o.output
	if outDir == "" {
		outDir = "occa-tools-traces"
	}
	outDir, err = filepath.Abs(outDir)
	if err == nil {
		err = os.MkdirAll(outDir, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: output directory: %v\n", err)
		return exitUsage
	}

	path, status, err := findProgram(o.argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: %v\n", err)
		return status
	}

	before := listTraces(outDir)
	preload, environ := inst.preload, os.Environ()
	if o.mpi {
		if preload, err = inst.mpiPreload(); err != nil {
			fmt.Fprintf(stderr, "occa-prof: %v\n", err)
			return exitUsage
		}
		environ = mpiEnv(environ)
	}
	env := childEnv(environ, cfg, outDir, preload)
	res, err := runChild(path, o.argv, env)
	if err != nil {
		fmt.Fprintf(stderr, "occa-prof: %v\n", err)
		return exitNotExecable
	}

	rank, size, _ := procinfo.Rank(os.Environ())
	if !o.quiet && rank <= 0 {
		report(stdout, stderr, outDir, before, start, res, o.argv[0], rank, size)
	}
	cleanup()
	if res.signal != 0 {
		dieOf(res.signal) // does not return
	}
	return res.status
}
