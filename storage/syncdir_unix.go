//go:build linux || darwin

package storage

import "os"

// syncDirectory syncs the folder dir, so that what was done to the names in
// it (a file created, renamed into place or removed) is on disk: until then
// a power cut may undo it, however well the files' own data was synced.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
