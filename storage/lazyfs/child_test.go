//go:build linux

package lazyfs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A process must not touch a mapping of a file on a FUSE mount it serves
// itself: a page fault on it blocks a thread outside any system call, so
// the Go runtime can neither preempt it nor stop the world for a
// collection, and the goroutines that would answer the fault wait for that
// collection. The test binary serves the mount; whatever maps a file on it
// (SQLite's -shm, TestSharedMapping) runs in a child, this binary started
// again with lazyfsChild naming the part to play.
const lazyfsChild = "LAZYFS_CHILD"

// children are the parts a child may play, by name; each reads its
// arguments from LAZYFS_ARG and writes its answer to standard output.
var children = map[string]func(arg string) (string, error){}

// TestMain runs the test binary as a child when asked.
func TestMain(m *testing.M) {
	if part := os.Getenv(lazyfsChild); part != "" {
		play, ok := children[part]
		if !ok {
			fmt.Fprintf(os.Stdout, "error: %s=%q names no part\n", lazyfsChild, part)
			os.Exit(2)
		}
		out, err := play(os.Getenv("LAZYFS_ARG"))
		if err != nil {
			fmt.Fprintln(os.Stdout, "error:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stdout, out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// inChild plays part in a child process and returns what it answered.
func inChild(t *testing.T, part, arg string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), lazyfsChild+"="+part, "LAZYFS_ARG="+arg)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v: %s", part, err, out)
	}
	return strings.TrimSpace(string(out))
}
