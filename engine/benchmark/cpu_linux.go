package benchmark

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// onThread runs f locked to its thread and returns the CPU seconds that
// thread spent in it: the drop's own share of this process's time, which is
// not keep's.
func onThread(f func() error) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &before); err != nil {
		return 0, err
	}
	err := f()
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &after); err != nil {
		return 0, err
	}
	d := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	return d.Seconds(), err
}
