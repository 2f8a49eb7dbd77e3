//go:build !linux

package sandbox

import "os/exec"

// startProcess starts a worker's cmd. Only Linux can tie a child's life to
// its parent's (procstart_linux.go); elsewhere a worker ends when its pipes
// close, at its next frame.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
