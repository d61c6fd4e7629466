// Occa-tools reads the trace files that the occa-tools runtime writes.
//
// Usage:
//
//	occa-tools <command> [arguments]
//
// Run "occa-tools help" for the list of commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/libocca/occa-tools/filters/config"
)

// A Command is one subcommand, as plain data (after cmd/go's base.Command).
type Command struct {
	// UsageLine is the one-line usage; its first word is the command's name.
	UsageLine string
	// Short is the one-line description shown by "occa-tools help".
	Short string
	// Long is the text shown by "occa-tools help <command>".
	Long string
	// Flag holds the command's flags.
	Flag flag.FlagSet
	// Run runs the command with the arguments left after the flags. It
	// returns a usageError for bad arguments (exit status 2) and any other
	// error for a failure (exit status 1).
	Run func(env *Env, cmd *Command, args []string) error
}

// Name returns the command's name.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.UsageLine, " ")
	return name
}

// Env is where a command writes.
type Env struct {
	Stdout, Stderr io.Writer
}

// commands lists every subcommand, in the order "occa-tools help" shows them.
// To add one, write cmd_<name>.go defining a *Command and list it here.
var commands = []*Command{
	cmdDump,
	cmdInfo,
	cmdSummary,
	cmdConvert,
	cmdVersion,
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errSilent is a failure already reported on stderr: exit status 1.
var errSilent = errors.New("failed")

func main() {
	tuneGC(defaultMemory)
	os.Exit(run(os.Args[1:], &Env{Stdout: os.Stdout, Stderr: os.Stderr}))
}

// tuneGC lets the heap grow to 5 times what is live before collecting,
// within three quarters of peak bytes, unless GOGC or GOMEMLIMIT say
// otherwise: the commands keep little live (the sums, a trace's window) and
// allocate a lot per trace, so with Go's default (2 times) a run of 10,000
// small traces spent most of its time marking. The limit keeps the peak
// near the target whatever the run.
func tuneGC(peak uint64) {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(int64(peak / 4 * 3))
	}
}

// defaultMemory is the peak that summary and convert aim at unless
// -memory says otherwise.
const defaultMemory = 256 << 20

// memorySize is the -memory flag of summary and convert: the peak they aim
// at. Three eighths of it is what the traces read at once may hold
// together (tracesMemory), three quarters the collector's limit (tuneGC):
// the collector then has about as much room as is live, and its work stays
// a small part of the run's. Given less room, with -j 8 it took a third of
// the CPU: twice the CPU for the same work. At the default 256 MiB a
// machine of many cores reads fewer large traces at once than it has
// cores; on 16 cores, 32 traces of 1 M events, -memory 4GiB ran summary
// 4.5 times as fast as one core, Parquet 9.1, CSV 10.1, Perfetto 6.0.
type memorySize uint64

func (m *memorySize) String() string { return config.FormatSize(uint64(*m)) }

func (m *memorySize) Set(s string) error {
	n, err := config.ParseSize(s)
	if err == nil && n < 64<<20 {
		err = fmt.Errorf("%s is below the 64MiB the commands need", s)
	}
	if err == nil {
		*m = memorySize(n)
	}
	return err
}

// memoryFlag defines fs's -memory flag, at defaultMemory.
func memoryFlag(fs *flag.FlagSet) *memorySize {
	m := memorySize(defaultMemory)
	fs.Var(&m, "memory", "the peak memory to aim at (`size`: 512MiB, 4GiB); more lets -j read more large traces at once")
	return &m
}

// tracesMemory is what the traces read at once may hold together
// (analysis.Parallel's budget).
func (m memorySize) tracesMemory() int64 { return int64(m / 8 * 3) }

// readCost is what reading one trace holds (analysis.Parallel's cost):
// Fixed bytes whatever its size (a converter's buffers), and PerByte bytes
// per byte of its file (the pairing window, the sums), up to Max where
// what grows with the trace is bounded (0: no bound). Measured as the
// largest live heap with -j 1 (GODEBUG=gctrace=1) on traces of the bundled
// workload: 1.75 MB ones of 1 M events, and ones of 853 events.
type readCost struct{ Fixed, PerByte, Max int64 }

// summaryCost is what summing a trace holds: its busy-time unions and its
// pairing window grow with it up to their bounds. Largest live heap 29,
// 26 and 35 MiB on workload traces of 1.7, 8.2 and 16.6 MB.
var summaryCost = readCost{4 << 20, 28, 40 << 20}

// traceCost returns the cost of reading trace i, of sizes[i] bytes.
func traceCost(sizes []int64, c readCost) func(i int) int64 {
	return func(i int) int64 {
		n := c.Fixed + sizes[i]*c.PerByte
		if c.Max > 0 {
			n = min(n, c.Max)
		}
		return n
	}
}

// fileSizes returns the size of each file (0 where it cannot be read).
func fileSizes(paths []string) []int64 {
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		if st, err := os.Stat(p); err == nil {
			sizes[i] = st.Size()
		}
	}
	return sizes
}

// run runs the command line args and returns the exit status.
func run(args []string, env *Env) int {
	if len(args) == 0 {
		printUsage(env.Stderr)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		return help(env, args[1:])
	}
	if name == "--version" || name == "-version" { // the spelling other tools take
		name = "version"
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(env.Stderr, "occa-tools %s: unknown command\nRun 'occa-tools help' for usage.\n", name)
		return 2
	}
	cmd.Flag = freshFlags(&cmd.Flag, cmd.Name())
	cmd.Flag.SetOutput(io.Discard) // errors are reported below, with the usage line
	if err := cmd.Flag.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(env.Stdout, "usage: occa-tools %s\n\n%s\n", cmd.UsageLine, strings.TrimSpace(cmd.Long))
			return 0
		}
		return usageFailure(env, cmd, err)
	}
	err := cmd.Run(env, cmd, cmd.Flag.Args())
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return usageFailure(env, cmd, err)
	case err != errSilent:
		fmt.Fprintf(env.Stderr, "occa-tools %s: %v\n", cmd.Name(), err)
	}
	return 1
}

func usageFailure(env *Env, cmd *Command, err error) int {
	fmt.Fprintf(env.Stderr, "occa-tools %s: %v\nusage: occa-tools %s\nRun 'occa-tools help %s' for details.\n",
		cmd.Name(), err, cmd.UsageLine, cmd.Name())
	return 2
}

// freshFlags returns fs's flags, each at its default, in a set that no
// parse has seen yet: run can be called more than once in one process
// (tests do), and a FlagSet remembers for ever which flags a parse set,
// which a command asks (given, Visit).
func freshFlags(fs *flag.FlagSet, name string) flag.FlagSet {
	var out flag.FlagSet
	out.Init(name, flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		f.Value.Set(f.DefValue)
		out.Var(f.Value, f.Name, f.Usage)
	})
	return out
}

// given reports whether the command line set the flag name.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func lookup(name string) *Command {
	for _, c := range commands {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

func help(env *Env, args []string) int {
	if len(args) == 0 {
		printUsage(env.Stdout)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(env.Stderr, "usage: occa-tools help [command]\n")
		return 2
	}
	cmd := lookup(args[0])
	if cmd == nil {
		fmt.Fprintf(env.Stderr, "occa-tools help %s: unknown command\nRun 'occa-tools help' for the list.\n", args[0])
		return 2
	}
	fmt.Fprintf(env.Stdout, "usage: occa-tools %s\n\n%s\n", cmd.UsageLine, strings.TrimSpace(cmd.Long))
	var flags strings.Builder
	cmd.Flag.SetOutput(&flags)
	cmd.Flag.PrintDefaults()
	cmd.Flag.SetOutput(io.Discard)
	if flags.Len() > 0 {
		fmt.Fprintf(env.Stdout, "\nFlags:\n%s", flags.String())
	}
	return 0
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Occa-tools reads the trace files that the occa-tools runtime writes.\n\nUsage:\n\n\tocca-tools <command> [arguments]\n\nThe commands are:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.Name(), c.Short)
	}
	fmt.Fprintf(w, "\nUse \"occa-tools help <command>\" for more information about a command.\n")
}
