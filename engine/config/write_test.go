package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWriteDefault: keep init's file loads back as the defaults, only its
// owner can read it, and an existing file is never overwritten.
func TestWriteDefault(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new", "config.toml")
	if err := WriteDefault(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	got.Path, want.Path = "", ""
	got.src = "" // the file it was read from, kept to say where a value is
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the written file loads as\n%+v\nwant the defaults\n%+v", got, want)
	}
	if err := os.WriteFile(path, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDefault(path); !errors.Is(err, os.ErrExist) {
		t.Errorf("writing over a file: err = %v, want os.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
}
