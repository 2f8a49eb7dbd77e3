package sandbox

import (
	"os/exec"

	"keep/connectors/childproc"
)

// workers are started from one thread, so none outlives keep; the thread
// has the timer slack the workers' runtimes start with
// (timerslack_linux.go).
var workerSpawner = childproc.New(func() { SetTimerSlack() })

// startProcess starts a worker's cmd so that it cannot outlive keep.
func startProcess(cmd *exec.Cmd) error { return workerSpawner.Start(cmd) }
