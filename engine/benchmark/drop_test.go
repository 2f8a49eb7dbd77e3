package benchmark

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The drop leaves every staged file in the folder and nothing beside it,
// each with the time it arrived, in order.
func TestDrop(t *testing.T) {
	dir := t.TempDir()
	staging, inbox := filepath.Join(dir, "staging"), filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Stage(staging, 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Drop(staging, inbox); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(staging)
	in, _ := os.ReadDir(inbox)
	if len(left) != 0 || len(in) != 20 || len(d.Dropped) != 20 {
		t.Fatalf("after the drop: %d staged, %d in the folder, %d times; want 0, 20, 20", len(left), len(in), len(d.Dropped))
	}
	for i, name := range d.Names {
		if at := d.Dropped[name]; at.Before(d.Start) || i > 0 && at.Before(d.Dropped[d.Names[i-1]]) {
			t.Fatalf("%s dropped at %v, before the start or the file before it", name, at)
		}
	}
}

// testdata/nodered, the Node-RED side of the comparison, is outside
// ./... (a testdata directory): it is built here so that it keeps up with
// this package. Running it needs Node-RED.
func TestNodeRedToolBuilds(t *testing.T) {
	out, err := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "nodered"), "./testdata/nodered").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./testdata/nodered: %v\n%s", err, out)
	}
}
