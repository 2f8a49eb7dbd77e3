package config

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestChangedNamesKeysNotValues(t *testing.T) {
	t.Parallel()
	a, b := Default(), Default()
	if got := Changed(a, b); len(got) != 0 {
		t.Fatalf("the same config changed %v", got)
	}
	if Digest(a) == "" || Digest(a) != Digest(b) {
		t.Fatalf("digests %q %q, want the same", Digest(a), Digest(b))
	}
	b.Policy.CrashLimit = 7
	b.Path = "/elsewhere.toml"
	if got := Changed(a, b); !slices.Equal(got, []string{"policy.crash_limit"}) {
		t.Fatalf("changed = %v, want policy.crash_limit", got)
	}
	if Digest(a) == Digest(b) {
		t.Fatal("different configs, same digest")
	}
}

func TestWatchSeesAWriteAndARename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	got := make(chan struct{}, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Watch(ctx, path, func() { got <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-got:
		case <-time.After(time.Minute):
			t.Fatalf("no change seen after %s", what)
		}
	}
	if err := os.WriteFile(path, []byte("[policy]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("a write")
	tmp := filepath.Join(dir, "config.toml.new")
	if err := os.WriteFile(tmp, []byte("[policy]\ncrash_limit = 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for len(got) > 0 { // the temp file is not ours; drain anything else
		<-got
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait("a rename")
}
