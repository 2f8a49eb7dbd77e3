package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"keep/engine/api"
)

// The socket is out of everyone else's reach from the moment it is bound,
// before its own mode is narrowed: bound in the database's folder, a
// connection made by another user in that window (the umask allowing it)
// outlived the chmod.
func TestTheSocketIsBoundWhereOnlyTheOwnerReaches(t *testing.T) {
	dir, err := os.MkdirTemp("", "kd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // a database folder others may enter
		t.Fatal(err)
	}
	var bound string
	var mode os.FileMode
	boundHook = func(path string) {
		bound = path
		if info, err := os.Stat(filepath.Dir(path)); err == nil {
			mode = info.Mode().Perm()
		}
	}
	defer func() { boundHook = nil }()
	sock := SocketPath(filepath.Join(dir, "keep.db"))
	srv, err := Serve(context.Background(), &feed{notes: make(chan api.Notification)}, sock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if bound == "" {
		t.Fatal("the hook saw no socket bound")
	}
	if mode&0o077 != 0 {
		t.Fatalf("the socket was bound at %s, in a folder of mode %v: others could connect before its chmod", bound, mode)
	}
	info, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("the socket's mode is %v, want 0600", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the folder holds %d entries after Serve, want the socket alone", len(entries))
	}
}
