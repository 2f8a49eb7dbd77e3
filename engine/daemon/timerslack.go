package daemon

import (
	"os"
	"runtime"
	"syscall"

	"keep/sandbox"
)

// StartWithTimerSlack starts the daemon (keep --daemon) again, before it opens anything,
// with its timer slack raised to sandbox.TimerSlack, when it runs with
// less: the runtime's monitor thread takes its slack from the process's
// start, and only a start gives it another (sandbox/timerslack_linux.go
// says why it matters). The pid, arguments, environment and descriptors
// stay; a start that fails leaves this one running as it was. Only the
// binary's own start calls it: a test running the daemon in its process
// would be replaced.
func StartWithTimerSlack() {
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
