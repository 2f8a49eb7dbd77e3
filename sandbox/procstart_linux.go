package sandbox

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// A worker dies with keep, even while it spins inside a built-in that
// never returns to the interrupt check: the kernel sends it SIGKILL when
// the thread that started it exits (PR_SET_PDEATHSIG). "The thread", not
// the process: so every worker is started from one thread locked for
// keep's lifetime, which exits only when keep does. Go's fork checks the
// parent is still there after setting the signal, so a keep that dies
// during the start leaves no worker either.

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner = sync.OnceValue(func() chan startRequest {
	ch := make(chan startRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as keep
		SetTimerSlack()        // the workers' runtimes start with it (timerslack_linux.go)
		for s := range ch {
			s.done <- s.cmd.Start()
		}
	}()
	return ch
})

// startProcess starts a worker's cmd so that it cannot outlive keep.
func startProcess(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	s := startRequest{cmd: cmd, done: make(chan error, 1)}
	spawner() <- s
	return <-s.done
}
