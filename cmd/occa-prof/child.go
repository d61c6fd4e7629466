package main

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// forwarded are the signals passed on to PROGRAM.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2}

// result is how PROGRAM ended.
type result struct {
	pid    int
	status int            // exit status when it exited
	signal syscall.Signal // the signal that killed it, or 0
}

// runChild runs PROGRAM in occa-prof's process group with the terminal's
// stdin, stdout and stderr, forwarding the signals above until it ends,
// but those that reached PROGRAM too (senders).
func runChild(path string, argv, env []string) (*result, error) {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...) // before the start: no early signal kills occa-prof
	defer signal.Stop(sigs)
	from := findSenders()
	defer from.close()

	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if !from.reachedProgram(s) {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	res := &result{pid: cmd.Process.Pid}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		res.signal = ws.Signal()
	case ok:
		res.status = ws.ExitStatus()
	case err != nil:
		res.status = 1
	}
	return res, nil
}
