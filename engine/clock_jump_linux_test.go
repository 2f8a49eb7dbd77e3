package engine

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux nothing compares the clocks on a timer: the kernel's notice
// that the wall clock was set (a resume from suspend is one) wakes the
// loops. The real clock is set to what it reads, which changes no time and
// gives the notice, while the engine's own clock jumps a week.
func TestResumeAfterSuspendIsNoticedWithoutPolling(t *testing.T) {
	// Not parallel: setting the clock, even to itself, is noticed by every
	// engine of the process, and the other tests' engines, whose clock is
	// a test's, would take it for a jump and run their workflows again at
	// a moment their tests do not expect. Sequential tests end before any
	// parallel one goes on.
	resumeAfterSuspend(t, func(b *bundle) {}, func() {
		var now unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_REALTIME, &now); err != nil {
			t.Fatal(err)
		}
		if err := unix.ClockSettime(unix.CLOCK_REALTIME, &now); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("setting the clock to itself (CAP_SYS_TIME): %v", err)
			}
			t.Skipf("setting the clock to itself needs CAP_SYS_TIME: %v", err)
		}
	})
}
