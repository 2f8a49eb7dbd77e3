package daemon

import (
	"context"
	"os"
	"runtime"
	"syscall"

	"keep/sandbox"
)

// RunAsDaemon is RunDaemon in keep --daemon's own process: it first starts
// the process again with keep's timer slack, which a test running RunDaemon
// in its own process must not.
func (s *Site) RunAsDaemon(ctx context.Context) error {
	startWithTimerSlack()
	return s.RunDaemon(ctx)
}

// startWithTimerSlack starts the daemon again, before it opens anything,
// with its timer slack raised to sandbox.TimerSlack, when it runs with
// less: the runtime's monitor thread takes its slack from the process's
// start, and only a start gives it another (sandbox/timerslack_linux.go
// says why it matters). The pid, arguments, environment and descriptors
// stay; a start that fails leaves this one running as it was.
func startWithTimerSlack() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if !sandbox.SetTimerSlack() {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, os.Environ())
}
