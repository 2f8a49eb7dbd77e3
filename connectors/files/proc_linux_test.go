package files_test

import (
	"testing"

	"keep/connectors"
	"keep/connectors/files"
)

// TestKeepsProcessIsOutOfReach: with a root that holds /proc (the whole
// disk, "/"), keep's own process is there: /proc/self/environ holds the
// credentials the config names by environment variable. No method reaches
// it, and a listing of /proc/self shows nothing. Before, read returned
// keep's environment.
func TestKeepsProcessIsOutOfReach(t *testing.T) {
	t.Setenv("KEEP_TEST_SECRET", "hunter2")
	protected, err := connectors.NewProtected(connectors.Place{Dir: t.TempDir(), Why: "beside keep's database"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := files.New(files.Config{Roots: []string{"/"}, Protected: protected, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{c: c, root: "/"}
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"read", map[string]any{"path": "/proc/self/environ"}},
		{"read", map[string]any{"path": "/proc/thread-self/environ"}},
		{"append", map[string]any{"path": "/proc/self/comm", "content": "x"}},
		{"write", map[string]any{"path": "/proc/self/attr/current", "content": "x"}},
		{"write", map[string]any{"path": "/proc/self/new.txt", "content": "x"}},
		{"move", map[string]any{"from": "/proc/self/environ", "to": "/tmp/environ"}},
	} {
		got, err := b.do(t, call.method, call.params)
		if connectors.ClassOf(err) != connectors.Permission {
			t.Errorf("%s %v: %.80v, %v; want a permission error", call.method, call.params, got, err)
		}
	}
	got, err := b.do(t, "list", map[string]any{"dir": "/proc/self"})
	if err == nil && len(got.([]any)) > 0 {
		t.Errorf("list /proc/self shows %d files of keep's process", len(got.([]any)))
	}
}
