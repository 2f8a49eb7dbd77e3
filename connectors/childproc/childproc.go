// Package childproc starts the processes keep runs beside itself (sandbox
// workers, MCP servers over stdio) so that none outlives keep.
package childproc

import "os/exec"

// A Spawner starts children from one place, so that what the kernel ties
// to the starting thread (Linux: the parent-death signal) is tied to
// keep's life.
type Spawner struct {
	setup func() // run once on the spawning thread before its first start
	start func(*exec.Cmd) error
}

// New is a Spawner whose thread runs setup (nil: nothing) before its first
// start: a setting children inherit from the thread that starts them.
func New(setup func()) *Spawner {
	s := &Spawner{setup: setup}
	s.start = s.platformStart()
	return s
}

// Start starts cmd so that it cannot outlive keep, where the platform can
// say so; elsewhere it is cmd.Start.
func (s *Spawner) Start(cmd *exec.Cmd) error { return s.start(cmd) }
