package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"unsafe"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// A config change reaches the running engine: the daemon and the TUI
// watch the file (and take SIGHUP), read it again, refuse it while it is
// broken and keep the one they run, and otherwise start the engine again
// on it, saying which keys changed (never their values: a key may hold a
// secret). Digest lets keep validate and keep try tell that the engine
// runs on another config than the file they read.

// flat is c as dotted keys and their encoded values.
func flat(c Config) (map[string]string, error) {
	c.Path = ""
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return nil, err
	}
	var m map[string]any
	if _, err := toml.Decode(b.String(), &m); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if t, ok := v.(map[string]any); ok {
			for k, x := range t {
				walk(prefix+k+".", x)
			}
			return
		}
		out[prefix[:len(prefix)-1]] = fmt.Sprintf("%#v", v)
	}
	walk("", m)
	return out, nil
}

// Changed lists the keys whose values differ between two configs, sorted.
func Changed(old, cur Config) []string {
	a, errA := flat(old)
	b, errB := flat(cur)
	if errA != nil || errB != nil {
		if reflect.DeepEqual(old, cur) {
			return nil
		}
		return []string{"(the config)"}
	}
	var keys []string
	for k, v := range a {
		if b[k] != v {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Digest names a config's values, not where it was read from: two files
// that say the same have the same digest.
func Digest(c Config) string {
	m, err := flat(c)
	if err != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, m[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Watch calls changed each time the file at path is written or replaced
// (an editor's rename too), until ctx ends. It waits on inotify on the
// file's folder: nothing polls.
func Watch(ctx context.Context, path string, changed func()) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("watching the config file: %w", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watching the config file: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return fmt.Errorf("watching the config file: %w", err)
	}
	// non-blocking: through the runtime's poller, so Close ends a Read
	ino := os.NewFile(uintptr(fd), "inotify")
	go func() {
		<-ctx.Done()
		ino.Close()
	}()
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		base := filepath.Base(path)
		for {
			n, err := ino.Read(buf)
			if err != nil {
				return
			}
			ours := false
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				ours = ours || string(name) == base
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
			if ours {
				changed()
			}
		}
	}()
	return nil
}
