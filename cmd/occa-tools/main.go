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
	"strings"
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
	tuneGC(baseMemory)
	os.Exit(run(os.Args[1:], &Env{Stdout: os.Stdout, Stderr: os.Stderr}))
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
