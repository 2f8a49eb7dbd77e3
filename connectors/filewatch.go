package connectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// fileSettles is how long a watched file must go unchanged before changed
// is called. A writer that truncates and then writes in parts is seen more
// than once; read at the first, a config would reload as the defaults. A
// burst is one call, made once it is over.
var fileSettles = 50 * time.Millisecond

// WatchFile calls changed each time the file at path is written or
// replaced (an editor's or keep's own atomic rename too), once the change
// has settled, until ctx ends. It watches the file's folder, which must
// exist, through the kernel's notifications (watchFolder): nothing polls,
// and the timer runs only while a change settles. keep's own files that
// another process may change under a running engine (the config,
// credentials.json) are watched through it. changed is called from one
// goroutine at a time.
func WatchFile(ctx context.Context, path string, changed func()) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	var mu sync.Mutex // one call of changed at a time, in order
	settled := time.AfterFunc(time.Hour, func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			changed()
		}
	})
	settled.Stop()
	context.AfterFunc(ctx, func() { settled.Stop() })
	if err := watchFolder(ctx, dir, filepath.Base(path), func() { settled.Reset(fileSettles) }); err != nil {
		settled.Stop()
		return fmt.Errorf("watching %s: %w", path, err)
	}
	return nil
}
