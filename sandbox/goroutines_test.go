package sandbox

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// goroutineID is the running goroutine's id, read from its stack's header.
func goroutineID() int {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.Atoi(string(b[:bytes.IndexByte(b, ' ')]))
	return id
}

// idleCount waits for the goroutines that finished to be idle, and counts them.
func idleCount(want int) int {
	for range 10000 {
		idle.Lock()
		n := len(idle.ready)
		idle.Unlock()
		if n >= want {
			return n
		}
		runtime.Gosched()
	}
	idle.Lock()
	defer idle.Unlock()
	return len(idle.ready)
}

func TestGoReusesAnIdleGoroutine(t *testing.T) {
	ids := make(chan int, 1)
	Go(func() { ids <- goroutineID() })
	first := <-ids
	if n := idleCount(1); n < 1 {
		t.Fatalf("%d goroutines idle after one finished", n)
	}
	Go(func() { ids <- goroutineID() })
	if second := <-ids; second != first {
		t.Errorf("the second fn ran on goroutine %d, not on %d, which was idle", second, first)
	}
}

func TestGoKeepsAtMostMaxIdle(t *testing.T) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range maxIdleGoroutines + 8 {
		wg.Add(1)
		Go(func() {
			defer wg.Done()
			<-release
		})
	}
	close(release)
	wg.Wait()
	// (a goroutine of an earlier test's runtime pool may hold one meanwhile)
	if n := idleCount(maxIdleGoroutines + 1); n > maxIdleGoroutines {
		t.Errorf("%d goroutines idle, want at most %d", n, maxIdleGoroutines)
	}
}

// deep uses about 64 KiB of stack, as a phase's goroutine does.
//
//go:noinline
func deep(n int) byte {
	var b [1 << 10]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return b[0]
	}
	return deep(n-1) + b[n%len(b)]
}

// BenchmarkGoDeepStack: a goroutine that grows its stack to 64 KiB, started
// by the go statement and by Go.
func BenchmarkGoDeepStack(b *testing.B) {
	for _, c := range []struct {
		name  string
		start func(func())
	}{{"go", func(fn func()) { go fn() }}, {"Go", Go}} {
		b.Run(c.name, func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				c.start(func() { done <- deep(60) })
				<-done
			}
		})
	}
}
