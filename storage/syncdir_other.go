//go:build !linux && !darwin

package storage

// syncDirectory does nothing where a folder cannot be opened and synced as
// a file (Windows): what the system offers there is the rename itself.
func syncDirectory(dir string) error { return nil }
