package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A client whose daemon stopped gets an AwayError naming the socket, the
// transport's cause under it; Dial where nothing listens gets the same.
func TestACallToAStoppedDaemonSaysTheEngineIsAway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := b.c.Workflows(context.Background())
	var away *AwayError
	if !errors.As(err, &away) || away.Socket != b.sock || !strings.Contains(err.Error(), "keep's engine is not running") {
		t.Fatalf("a call to a stopped daemon: %v (%T), want an AwayError naming %s", err, err, b.sock)
	}
	dir, err := os.MkdirTemp("", "kd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	none := filepath.Join(dir, "keep.db.sock")
	if _, err := Dial(none); !errors.As(err, &away) || away.Socket != none {
		t.Fatalf("Dial where nothing listens: %v, want an AwayError naming %s", err, none)
	}
}
