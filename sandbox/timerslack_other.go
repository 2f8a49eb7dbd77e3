//go:build !linux

package sandbox

// TimerSlack is Linux's (timerslack_linux.go).
const TimerSlack = 0

// SetTimerSlack does nothing: only Linux has a thread's timer slack.
func SetTimerSlack() (raised bool) { return false }
