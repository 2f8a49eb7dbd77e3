package accounts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"keep/connectors"
)

// Watch calls signedIn with the accounts that were signed in anew each
// time another process replaces the credentials file (keep auth login
// while a daemon or the TUI holds the engine), until ctx ends. It waits on
// the kernel's notifications: nothing polls.
func (s *Store) Watch(ctx context.Context, signedIn func(names []string)) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("watching the credentials file: %w", err)
	}
	seen := s.signInTimes()
	// WatchFile calls back from its one goroutine: seen needs no lock. A
	// symlink's file is what writes replace (writeAtomic), in its folder.
	return connectors.WatchFile(ctx, resolved(s.path), func() {
		now := s.signInTimes()
		var changed []string
		for name, t := range now {
			if !t.Equal(seen[name]) {
				changed = append(changed, name)
			}
		}
		seen = now
		if len(changed) > 0 {
			signedIn(changed)
		}
	})
}

// signInTimes reads when each account was last signed in, for accounts
// whose sign-in is usable.
func (s *Store) signInTimes() map[string]time.Time {
	f, _, err := readFile(s.path)
	out := map[string]time.Time{}
	if err != nil {
		return out
	}
	for name, e := range f.Accounts {
		if e.Refused == "" && !e.SignedInAt.IsZero() {
			out[name] = e.SignedInAt
		}
	}
	return out
}
