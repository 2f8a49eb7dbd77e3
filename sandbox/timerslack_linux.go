package sandbox

import (
	"golang.org/x/sys/unix"
)

// Each Go process runs a monitor thread (the runtime's sysmon) that sleeps
// 20 µs at a time whenever a goroutine has entered a system call lately,
// and keep's processes enter one for every frame, commit and sync: in the
// files→http round the monitors' wake-ups were the largest kernel cost of
// all, a tenth of keep's CPU, more than its writes to the log. The kernel
// may wake a thread's timed sleeps up to its timer slack late and batch
// them (50 µs by default); at TimerSlack, a monitor wakes about a
// thousand times a second instead of fourteen thousand. A thread inherits
// its slack from the one that starts it, a process from the thread that
// forked it, across exec too, and the monitor thread is the runtime's
// first: so a process gets it from whoever starts it (SetTimerSlack on
// the thread that forks workers; the daemon starts itself again with it).
// What waits on a timer in keep waits milliseconds or more; a phase's
// bound or a schedule may fire up to TimerSlack late.

// TimerSlack is the timer slack of keep's long-lived processes.
const TimerSlack = 1_000_000 // ns

// SetTimerSlack raises the calling thread's timer slack to TimerSlack when
// it is less, and says whether it did; the caller holds its thread
// (runtime.LockOSThread) for what it starts from it.
func SetTimerSlack() (raised bool) {
	now, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || now >= TimerSlack {
		return false
	}
	return unix.Prctl(unix.PR_SET_TIMERSLACK, TimerSlack, 0, 0, 0) == nil
}
