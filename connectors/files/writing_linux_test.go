package files_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// TestAFileBeingWrittenIsLeftOut: a file copied in place (cp writes it in
// many writes) is in the folder, with a size, from its first write. While
// any process holds it open for writing (here the test's own, half of it
// written) list leaves it out and tells Unfinished, and read refuses it as
// transient, naming it; once it is closed, list shows it whole and read
// reads it. A finished file beside it is listed as before, and a file
// only open for reading is not taken for one being written. Before, list
// showed the half file and read returned half its content.
func TestAFileBeingWrittenIsLeftOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put(t, b.root, "inbox/done.txt", "done")
	reading, err := os.Open(filepath.Join(b.root, "inbox/done.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer reading.Close()
	before := b.must(t, "list", map[string]any{"dir": "inbox"}).([]any)

	w, err := os.OpenFile(filepath.Join(b.root, "inbox/half.txt"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("first half "); err != nil {
		t.Fatal(err)
	}
	list := func() ([]any, int) {
		t.Helper()
		told := 0
		got, err := b.c.Do(context.Background(), connectors.Call{Method: "list", Params: map[string]any{"dir": "inbox"}, Unfinished: func() { told++ }})
		if err != nil {
			t.Fatal(err)
		}
		return got.([]any), told
	}
	got, told := list()
	if !reflect.DeepEqual(got, before) || told != 1 {
		t.Fatalf("with half.txt open for writing, list gave %v and told Unfinished %d times; want %v alone, told once", got, told, before)
	}
	_, err = b.do(t, "read", map[string]any{"path": "inbox/half.txt"})
	if connectors.ClassOf(err) != connectors.Transient || !strings.Contains(err.Error(), "inbox/half.txt is still being written by another process") {
		t.Fatalf("read of half.txt open for writing: %v (class %q); want a transient refusal naming it", err, connectors.ClassOf(err))
	}

	// asked for (a live log is never closed): listed, marked, nothing told,
	// and read as it stands
	told = 0
	all, err := b.c.Do(context.Background(), connectors.Call{Method: "list", Params: map[string]any{"dir": "inbox", "unfinished": true}, Unfinished: func() { told++ }})
	if err != nil {
		t.Fatal(err)
	}
	if l := all.([]any); len(l) != 2 || l[1].(map[string]any)["unfinished"] != true || l[0].(map[string]any)["unfinished"] != nil || told != 0 {
		t.Fatalf("list with unfinished: true gave %v, told %d; want half.txt marked unfinished, done.txt as before, nothing told", l, told)
	}
	if r := b.must(t, "read", map[string]any{"path": "inbox/half.txt", "unfinished": true}).(map[string]any); r["content"] != "first half " {
		t.Fatalf("read with unfinished: true gave %v, want the half written so far", r)
	}

	if _, err := w.WriteString("second half"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, told = list()
	if len(got) != 2 || !reflect.DeepEqual(got[0], before[0]) || told != 0 {
		t.Fatalf("once closed, list gave %v and told Unfinished %d times; want done.txt as before and half.txt, told nothing", got, told)
	}
	if half := got[1].(map[string]any); half["name"] != "half.txt" || half["size"] != int64(len("first half second half")) {
		t.Fatalf("once closed, half.txt is listed as %v", half)
	}
	read := b.must(t, "read", map[string]any{"path": "inbox/half.txt"}).(map[string]any)
	if read["content"] != "first half second half" {
		t.Fatalf("once closed, read gave %v", read)
	}
}

// TestAnAppendWaitsOutAListsProbe: list's probe holds a read lease on each
// file for two system calls, and an open for writing that may not wait
// (append's, which must not hang on a FIFO) is refused while one is held.
// append asks again for a moment, and appends once the lease is let go.
// Here the test holds the lease until it is asked to break it. Before,
// the append failed with "resource temporarily unavailable".
func TestAnAppendWaitsOutAListsProbe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := put(t, b.root, "log.txt", "a")
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		t.Skipf("no lease here: %v", err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
			// a lease being broken reads as what it is to become
			if got, err := unix.FcntlInt(uintptr(fd), unix.F_GETLEASE, 0); err != nil || got == unix.F_UNLCK {
				break
			}
		}
		unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	}()
	got := b.must(t, "append", map[string]any{"path": "log.txt", "content": "b"}).(map[string]any)
	<-released
	if got["size"] != int64(2) {
		t.Fatalf("append gave %v", got)
	}
}

// TestKeepsOwnAppendIsNoWriterAtWork: an append whose sync the host runs
// later (SyncLater) keeps a handle of the file until then; held for
// writing, it made the file look copied in by another process, so the
// next run's list left the file out and its read was refused (a workflow
// that writes a header when its log is missing wrote it twice). The handle
// kept for the sync is read-only; the sync still reaches the disk.
func TestKeepsOwnAppendIsNoWriterAtWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var pending []func() error
	if _, err := b.c.Do(context.Background(), connectors.Call{Method: "append", Params: map[string]any{"path": "log.csv", "content": "a,b\n"},
		SyncLater: func(sync func() error) { pending = append(pending, sync) }}); err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 {
		t.Fatalf("%d syncs handed to the host, want 1", len(pending))
	}
	told := 0
	got, err := b.c.Do(context.Background(), connectors.Call{Method: "list", Params: map[string]any{"glob": "log.csv"}, Unfinished: func() { told++ }})
	if err != nil {
		t.Fatal(err)
	}
	if l := got.([]any); len(l) != 1 || told != 0 {
		t.Fatalf("with keep's own sync pending, list gave %v and told Unfinished %d times; want log.csv, nothing told", l, told)
	}
	if r := b.must(t, "read", map[string]any{"path": "log.csv"}).(map[string]any); r["content"] != "a,b\n" {
		t.Fatalf("read gave %v", r)
	}
	if err := pending[0](); err != nil {
		t.Fatalf("the sync: %v", err)
	}
}
