package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// A child dies with keep, even one spinning where nothing reads its end
// of a pipe: the kernel sends it SIGKILL when the thread that started it
// exits (PR_SET_PDEATHSIG). "The thread", not the process: so every child
// of a Spawner is started from one thread locked for keep's lifetime,
// which exits only when keep does. Go's fork checks the parent is still
// there after setting the signal, so a keep that dies during the start
// leaves no child either.

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func (s *Spawner) platformStart() func(*exec.Cmd) error {
	requests := sync.OnceValue(func() chan startRequest {
		ch := make(chan startRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as keep
			if s.setup != nil {
				s.setup()
			}
			for r := range ch {
				r.done <- r.cmd.Start()
			}
		}()
		return ch
	})
	return func(cmd *exec.Cmd) error {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		r := startRequest{cmd: cmd, done: make(chan error, 1)}
		requests() <- r
		return <-r.done
	}
}
