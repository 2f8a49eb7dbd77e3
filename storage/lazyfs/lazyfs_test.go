//go:build linux

package lazyfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// mountForTest mounts a fresh lazyfs, or skips (fails under CI=true) when
// this machine cannot mount FUSE file systems.
func mountForTest(t *testing.T) (*FS, string, string) {
	t.Helper()
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "disk"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Mount(backing, mnt)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and FUSE cannot mount here: %v", err)
		}
		t.Skipf("FUSE cannot mount here (needs /dev/fuse and root or fuse3): %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, backing, mnt
}

func TestCutDropsWhatWasNotSynced(t *testing.T) {
	l, backing, mnt := mountForTest(t)

	synced := filepath.Join(mnt, "synced")
	f, err := os.Create(synced)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("on disk")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// written after the sync: seen, then lost
	if _, err := f.Write([]byte(" and more")); err != nil {
		t.Fatal(err)
	}
	f.Close()

	unsynced := filepath.Join(mnt, "unsynced")
	if err := os.WriteFile(unsynced, []byte("only in memory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(unsynced); string(b) != "only in memory" {
		t.Fatalf("before the cut the mount shows %q, want what was written", b)
	}
	if b, _ := os.ReadFile(synced); string(b) != "on disk and more" {
		t.Fatalf("before the cut the mount shows %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(backing, "unsynced")); len(b) != 0 {
		t.Fatalf("unsynced data reached the disk: %q", b)
	}

	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(synced); string(b) != "on disk" {
		t.Errorf("after the cut the synced file holds %q, want %q", b, "on disk")
	}
	if b, _ := os.ReadFile(unsynced); len(b) != 0 {
		t.Errorf("after the cut the unsynced file holds %q, want nothing", b)
	}
	if s := l.Stats(); s.Dropped != int64(len(" and more")+len("only in memory")) || s.Cuts != 1 {
		t.Errorf("stats %+v: want the two unsynced writes dropped by one cut", s)
	}
}

func TestOverlappingWritesAndTruncate(t *testing.T) {
	l, _, mnt := mountForTest(t)
	p := filepath.Join(mnt, "f")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.WriteAt(bytes.Repeat([]byte("a"), 10000), 0)
	must(err)
	must(f.Sync())
	_, err = f.WriteAt([]byte("BBBB"), 4094) // across a page boundary
	must(err)
	must(f.Truncate(9000))
	_, err = f.WriteAt([]byte("z"), 12000) // leaves a hole
	must(err)
	got, err := os.ReadFile(p)
	must(err)
	want := bytes.Repeat([]byte("a"), 9000)
	copy(want[4094:], "BBBB")
	want = append(want, make([]byte, 12000-9000)...)
	want = append(want, 'z')
	if !bytes.Equal(got, want) {
		t.Fatalf("the mount shows %d bytes, not the writes in order (want %d)", len(got), len(want))
	}
	must(f.Close())
	must(l.Cut())
	// the truncate reached the disk at once; the writes after the sync did not
	got, err = os.ReadFile(p)
	must(err)
	if !bytes.Equal(got, bytes.Repeat([]byte("a"), 9000)) {
		t.Fatalf("after the cut: %d bytes, want the synced data cut to 9000", len(got))
	}
}
