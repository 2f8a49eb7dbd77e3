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

// NewFolderWatcher is fsnotify's watcher here: a file is told of at each
// write, not only at its close.
func NewFolderWatcher() (FolderWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsFolders{w}, nil
}

type fsFolders struct{ *fsnotify.Watcher }

func (w fsFolders) Events() <-chan fsnotify.Event { return w.Watcher.Events }
func (w fsFolders) Errors() <-chan error          { return w.Watcher.Errors }
