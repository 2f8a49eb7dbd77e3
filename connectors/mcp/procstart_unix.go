//go:build unix && !linux

package mcp

import (
	"os/exec"
	"syscall"
)

// startServer starts cmd in a process group of its own (groupSignal).
// Without PR_SET_PDEATHSIG, a server deaf to the end of its input may
// outlive a keep that is killed.
func startServer(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd.Start()
}
