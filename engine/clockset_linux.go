package engine

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// clockSets reports each time the wall clock is set or jumps — by hand, by
// a time daemon stepping it, or on resume from suspend, which the kernel
// treats as the clock being set — without looking at it meanwhile: a timer
// on CLOCK_REALTIME armed for the end of time with TFD_TIMER_CANCEL_ON_SET,
// whose read fails with ECANCELED on each such change. The engine never
// polls, idle or not. It ends when ctx does.
func clockSets(ctx context.Context) (<-chan struct{}, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_REALTIME, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	arm := func() error {
		// about 2116: within what the kernel takes for a time
		never := unix.ItimerSpec{Value: unix.NsecToTimespec(1 << 62)}
		return unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME|unix.TFD_TIMER_CANCEL_ON_SET, &never, nil)
	}
	if err := arm(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "clock-set timer") // non-blocking: read waits in Go's poller
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		buf := make([]byte, 8)
		for {
			_, err := f.Read(buf)
			if err != nil && !errors.Is(err, unix.ECANCELED) {
				return // closed
			}
			if arm() != nil {
				return
			}
			if err == nil {
				continue // the clock was set past the end of time: armed again
			}
			select {
			case out <- struct{}{}:
			default: // one pending is enough: the reader looks at the clock itself
			}
		}
	}()
	return out, nil
}
