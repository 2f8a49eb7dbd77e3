//go:build unix

package mcp

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// A stdio server runs in a process group of its own, and keep signals the
// group: what the server started (npx's node, a shell's children, a helper
// it forks) stops with it, and the terminal's Ctrl-C reaches keep alone,
// which stops its servers in order.

// startServer starts cmd in a process group of its own, so that it cannot
// outlive keep (childproc).
func startServer(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return servers.Start(cmd)
}

// groupSignal sends sig to the server's process group.
func groupSignal(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

// sweepGroup stops what is left of the group of a server that has exited:
// SIGTERM, up to grace to go, then SIGKILL.
func sweepGroup(p *os.Process, grace time.Duration) {
	if err := syscall.Kill(-p.Pid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return // nothing left
	}
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if errors.Is(syscall.Kill(-p.Pid, 0), syscall.ESRCH) {
			return
		}
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
