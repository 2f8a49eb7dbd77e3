package engine

import (
	"slices"
	"testing"
	"time"

	"keep/sandbox"
)

// TestAListingThatLeftAFileOutLooksAgain: a listing of the watched folder
// that left out a file still being written wakes its producer again after
// sandbox.WatchRecheck, no event telling of the writer's close; each
// listing that finds it still open, nothing written since, doubles the
// wait up to sandbox.WatchRecheckMax, and a write brings it back to the
// start. A listing that leaves nothing out leaves no timer, and a listing
// under way holds the timer off. Before, nothing woke the producer until
// its rescan, five minutes on.
func TestAListingThatLeftAFileOutLooksAgain(t *testing.T) {
	t.Parallel()
	f, st, ws := watchedInbox(t)
	p := watcher{ws, "p"}
	list := func(unfinished bool) {
		t.Helper()
		f.ran(1, "p")
		f.listed(1, "p", "/inbox")
		f.looked(1, "p", "/inbox", unfinished)
	}

	list(true)
	var waits []time.Duration
	for range 10 {
		if st.fire == nil {
			t.Fatalf("after waits %v, no timer to look again", waits)
		}
		waits = append(waits, st.armed[len(st.armed)-1])
		st.fire()
		if !f.isWoken(1, "p") {
			t.Fatalf("the timer after %v woke nothing", waits)
		}
		list(true)
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	if want[0] != sandbox.WatchRecheck || want[8] != sandbox.WatchRecheckMax || !slices.Equal(waits, want) {
		t.Fatalf("a file held open and idle was looked at again after %v, want %v", waits, want)
	}

	// a write: the writer is at work, and the next wait starts short
	f.changed(fsEvent("/inbox/big.pdf"))
	st.now = st.now.Add(sandbox.WatchQuiet)
	st.fire() // the burst settles
	list(true)
	if got := st.armed[len(st.armed)-1]; got != sandbox.WatchRecheck || st.fire == nil {
		t.Fatalf("after a write, the wait to look again is %v, want %v", got, sandbox.WatchRecheck)
	}

	// a timer that fires while a listing is under way wakes nothing: the
	// listing looks, and sets the next
	fire := st.fire
	f.ran(1, "p")
	f.listed(1, "p", "/inbox")
	fire()
	if f.isWoken(1, "p") {
		t.Fatal("a timer firing during the listing woke the producer again")
	}
	f.looked(1, "p", "/inbox", false)
	f.mu.Lock()
	left := f.rechecks[p]
	f.mu.Unlock()
	if left != nil || st.fire != nil {
		t.Fatal("a listing that left nothing out left a timer")
	}
	// nor does a listing that never left anything out arm one
	list(false)
	if st.fire != nil {
		t.Fatal("a listing that left nothing out armed a timer")
	}
}
