package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.log")
	log, closer, err := OpenLog(path, 1, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1000)
	for range 6000 { // about 6 MB through a 1 MB log
		log.Info("filler", "text", line)
	}
	closer.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 1<<20 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keep.log: %v, size %d, mode %v: want at most 1 MB, 0600", err, fi.Size(), fi.Mode().Perm())
	}
	// lumberjack removes the oldest backups in a goroutine of its own
	var entries []os.DirEntry
	backups := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		entries, _ = os.ReadDir(dir)
		backups = 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "keep-") && strings.HasSuffix(e.Name(), ".log") {
				backups++
			}
		}
		if backups == logBackups {
			break
		}
	}
	if backups != logBackups {
		t.Fatalf("%d rotated files kept (%v), want %d", backups, entries, logBackups)
	}
}

// TestOpenLogPrivate: a keep.log an older keep left readable by others is
// made 0600 before anything more is written to it.
func TestOpenLogPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keep.log")
	if err := os.WriteFile(path, []byte("old line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	log, closer, err := OpenLog(path, 1, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("a new line")
	closer.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keep.log: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
}

// TestOpenLogRefusesALink: a symbolic link planted where keep.log goes (to
// /etc/passwd, say) is not written through: the log is refused at open,
// naming it, and the link's target keeps its bytes.
func TestOpenLogRefusesALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "passwd")
	const content = "root:x:0:0:root:/root:/bin/sh\n"
	if err := os.WriteFile(victim, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "keep.log")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	log, closer, err := OpenLog(path, 1, slog.LevelInfo)
	if err == nil {
		log.Info("a line")
		closer.Close()
	}
	if got, _ := os.ReadFile(victim); string(got) != content || err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenLog through a link: err %v; the target holds %q", err, got)
	}
}
