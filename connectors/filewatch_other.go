//go:build !linux

package connectors

import (
	"context"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watchFolder calls seen for each change fsnotify reports of a file named
// base in dir (a write or a rename in), until ctx ends.
func watchFolder(ctx context.Context, dir, base string, seen func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == base && ev.Op.Has(fsnotify.Write|fsnotify.Create) {
					seen()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				seen() // an overflow lost events: the file may have changed
			}
		}
	}()
	return nil
}
