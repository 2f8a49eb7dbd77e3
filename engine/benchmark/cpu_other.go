//go:build !linux

package benchmark

// onThread runs f; without a thread's own CPU time to read, the drop's
// share is not taken off keep's.
func onThread(f func() error) (float64, error) { return 0, f() }
