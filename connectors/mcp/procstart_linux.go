package mcp

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// A stdio server dies with keep, even one deaf to the end of its input:
// the kernel sends it SIGKILL when the thread that started it exits
// (PR_SET_PDEATHSIG). "The thread", not the process: so every server is
// started from one thread locked for keep's lifetime, as sandbox workers
// are (sandbox/procstart_linux.go).

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner = sync.OnceValue(func() chan startRequest {
	ch := make(chan startRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as keep
		for s := range ch {
			s.done <- s.cmd.Start()
		}
	}()
	return ch
})

// startServer starts cmd in a process group of its own (groupSignal), so
// that it cannot outlive keep.
func startServer(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	s := startRequest{cmd: cmd, done: make(chan error, 1)}
	spawner() <- s
	return <-s.done
}
