package connectors

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestFolderWatcherTellsOfWholeFiles: a file is told of once its writer
// closes it, not as it is created or written; a file moved in, a hard link,
// a folder made, a file removed or moved away are told of as they happen;
// the folder's own removal ends its watch. Each step ends with a marker
// file closed, and the kernel's events come in order, so what came before
// the marker is all there is.
func TestFolderWatcherTellsOfWholeFiles(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	w, err := NewFolderWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	marks := 0
	until := func() []fsnotify.Event {
		t.Helper()
		marks++
		mark := filepath.Join(elsewhere, "mark")
		if err := os.WriteFile(mark, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(mark, filepath.Join(dir, "mark")); err != nil {
			t.Fatal(err)
		}
		var got []fsnotify.Event
		deadline := time.After(20 * time.Second)
		for {
			select {
			case ev := <-w.Events():
				if filepath.Base(ev.Name) == "mark" && ev.Op == fsnotify.Create {
					if err := os.Remove(filepath.Join(dir, "mark")); err != nil {
						t.Fatal(err)
					}
					<-w.Events() // its removal
					return got
				}
				got = append(got, ev)
			case err := <-w.Errors():
				t.Fatal(err)
			case <-deadline:
				t.Fatal("no event for the marker")
			}
		}
	}
	want := func(got []fsnotify.Event, evs ...fsnotify.Event) {
		t.Helper()
		if len(got) != len(evs) {
			t.Fatalf("step %d: events %v, want %v", marks, got, evs)
		}
		for i := range evs {
			if got[i] != evs[i] {
				t.Fatalf("step %d: events %v, want %v", marks, got, evs)
			}
		}
	}
	p := filepath.Join(dir, "report.txt")
	half, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	half.WriteString("first half,")
	want(until())
	half.WriteString(" second half")
	half.Close()
	want(until(), fsnotify.Event{Name: p, Op: fsnotify.Write})
	if err := os.Link(p, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p, filepath.Join(elsewhere, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	want(until(), fsnotify.Event{Name: filepath.Join(dir, "link.txt"), Op: fsnotify.Create},
		fsnotify.Event{Name: filepath.Join(dir, "sub"), Op: fsnotify.Create},
		fsnotify.Event{Name: p, Op: fsnotify.Rename})
	if err := os.RemoveAll(filepath.Join(dir)); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-w.Events():
			if ev.Name == dir && ev.Op == fsnotify.Remove {
				if err := w.Remove(dir); err == nil {
					t.Error("the watch of a folder removed is still there")
				}
				return
			}
		case <-deadline:
			t.Fatal("the folder's removal was not told of")
		}
	}
}
