package connectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fileSettles is how long a watched file must go unchanged before changed
// is called. A writer that truncates and then writes (an editor, a shell
// redirection) is seen twice by the kernel, once with the file empty: read
// then, a config would reload as the defaults. A burst is one call, made
// once it is over.
var fileSettles = 50 * time.Millisecond

// WatchFile calls changed each time the file at path is written or
// replaced (an editor's or keep's own atomic rename too), once the change
// has settled, until ctx ends. It watches the file's folder, which must
// exist, through the kernel's notifications (fsnotify): nothing polls, and
// the timer runs only while a change settles. keep's own files that
// another process may change under a running engine (the config,
// credentials.json) are watched through it. changed is called from one
// goroutine at a time.
func WatchFile(ctx context.Context, path string, changed func()) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watching %s: %w", path, err)
	}
	base := filepath.Base(path)
	var mu sync.Mutex // one call of changed at a time, in order
	settled := time.AfterFunc(time.Hour, func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			changed()
		}
	})
	settled.Stop()
	go func() {
		defer w.Close()
		defer settled.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == base && ev.Op.Has(fsnotify.Write|fsnotify.Create) {
					settled.Reset(fileSettles)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// an overflow lost events: the file may have changed
				settled.Reset(fileSettles)
			}
		}
	}()
	return nil
}
