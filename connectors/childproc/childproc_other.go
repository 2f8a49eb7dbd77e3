//go:build !linux

package childproc

import "os/exec"

// Only Linux can tie a child's life to its parent's (childproc_linux.go);
// elsewhere a child ends when its pipes close.
func (s *Spawner) platformStart() func(*exec.Cmd) error {
	return func(cmd *exec.Cmd) error { return cmd.Start() }
}
