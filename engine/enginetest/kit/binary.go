package kit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RunWithKeep is a TestMain for packages that drive the real binary: it
// builds keep once into a temp dir, stores its path in *bin, runs the
// tests and exits with their code.
func RunWithKeep(m *testing.M, bin *string) {
	dir, err := os.MkdirTemp("", "keep-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "keep")
	build := exec.Command("go", "build", "-o", *bin, "keep")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building keep:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
