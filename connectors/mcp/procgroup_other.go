//go:build !unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

func startServer(cmd *exec.Cmd) error { return servers.Start(cmd) }

func groupSignal(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

func sweepGroup(*os.Process, time.Duration) {}
