package clitest

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keep validate and keep deploy read the workflow file through
// sandbox.ReadFile: what is not a regular file, or is too large, is refused
// with a message, and a named pipe never blocks keep.
func TestValidateRefusesWhatIsNotAWorkflowFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fifo := filepath.Join(e.dir, "pipe.js")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := e.file(e.dir, "big.js", strings.Repeat("// a comment line\n", 70000))
	for _, tt := range []struct{ cmd, file, want string }{
		{"validate", "/dev/zero", "is not a regular file (it is a character device)"},
		{"validate", fifo, "is not a regular file (it is a named pipe)"},
		{"deploy", fifo, "is not a regular file (it is a named pipe)"},
		{"validate", e.dir, "is not a regular file (it is a directory)"},
		{"validate", big, "over the limit of 1048576 bytes"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := runCmd(t, e.command(ctx, tt.cmd, tt.file))
		cancel()
		if r.code != 1 || !strings.HasPrefix(r.stderr, "keep: ") || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("keep %s %s: want exit 1 with %q, got %s", tt.cmd, tt.file, tt.want, r)
		}
	}
}

// Every path a person names, not only a workflow file, is refused at once
// when it is a named pipe or a device: a backup to restore, the database
// (--db) and the config file (--config). Before, each hung keep in open(2).
func TestUserPathsRefuseWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fifo := filepath.Join(e.dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", fifo}, "backup " + fifo + " is not a regular file (it is a named pipe)"},
		{[]string{"restore", "/dev/zero"}, "backup /dev/zero is not a regular file (it is a character device)"},
		{[]string{"--db", fifo, "restore", "/dev/null"}, "database " + fifo + " is not a regular file (it is a named pipe)"},
		{[]string{"--db", fifo, "backup", filepath.Join(e.dir, "b.db")}, "database " + fifo + " is not a regular file (it is a named pipe)"},
		{[]string{"--db", fifo, "workflows"}, "database " + fifo + " is not a regular file (it is a named pipe)"},
		{[]string{"--config", fifo, "workflows"}, "config file " + fifo + " is not a regular file (it is a named pipe)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := runCmd(t, e.command(ctx, tt.args...))
		cancel()
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("keep %s: want exit 1 with %q, got %s", strings.Join(tt.args, " "), tt.want, r)
		}
	}
}
