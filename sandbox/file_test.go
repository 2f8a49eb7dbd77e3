package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	refuses := func(t *testing.T, path, want string) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadFile(%s) = %v, want an error containing %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) hangs", path)
		}
	}

	t.Run("a workflow file reads", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(dir, "ok.js")
		if err := os.WriteFile(p, []byte(handlers{}.source()), 0o600); err != nil {
			t.Fatal(err)
		}
		src, err := ReadFile(p)
		if want := (handlers{}).source(); err != nil || string(src) != want {
			t.Fatalf("ReadFile = %q, %v", src, err)
		}
	})
	t.Run("/dev/zero is refused before it is read", func(t *testing.T) {
		t.Parallel()
		refuses(t, "/dev/zero", "is not a regular file (it is a character device)")
	})
	t.Run("a named pipe is refused without blocking", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(dir, "pipe.js")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		refuses(t, p, "is not a regular file (it is a named pipe)")
	})
	t.Run("a directory is refused", func(t *testing.T) {
		t.Parallel()
		refuses(t, dir, "is not a regular file (it is a directory)")
	})
	t.Run("a file over MaxSourceSize is refused", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(dir, "big.js")
		if err := os.WriteFile(p, []byte(strings.Repeat("//xxxxxxx\n", MaxSourceSize/10+1)), 0o600); err != nil {
			t.Fatal(err)
		}
		refuses(t, p, "over the limit of 1048576 bytes (1024 KiB) for a workflow file")
	})
	t.Run("a missing file names the file", func(t *testing.T) {
		t.Parallel()
		refuses(t, filepath.Join(dir, "missing.js"), "missing.js")
	})
	t.Run("Load refuses a source over MaxSourceSize handed over directly", func(t *testing.T) {
		t.Parallel()
		src := []byte(handlers{}.source() + strings.Repeat(" ", MaxSourceSize))
		_, err := Load("big.js", src, LoadOptions{Methods: testMethods, MinInterval: time.Minute})
		if err == nil || !strings.Contains(err.Error(), "over the limit of 1048576 bytes for a workflow file") {
			t.Errorf("Load = %v", err)
		}
	})
}
