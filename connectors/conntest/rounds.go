// Package conntest holds what connector tests share.
package conntest

import (
	"sync"
	"testing"
)

// Rounds makes atOnce calls at once, rounds times, each round after the
// last has ended, as a consumer's concurrent runs call one service; the
// first error fails the test.
func Rounds(t *testing.T, atOnce, rounds int, call func(round, i int) error) {
	t.Helper()
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, atOnce)
		for i := range atOnce {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := call(round, i); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}
