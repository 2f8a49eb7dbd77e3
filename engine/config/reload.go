package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"

	"github.com/BurntSushi/toml"

	"keep/connectors"
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
// (an editor's rename too), once the change has settled, until ctx ends.
// It waits on the kernel's notifications for the file's folder: nothing
// polls.
func Watch(ctx context.Context, path string, changed func()) error {
	return connectors.WatchFile(ctx, path, changed)
}
