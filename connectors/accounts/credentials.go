package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// file is credentials.json: every secret keep holds, by account name.
type file struct {
	Accounts map[string]*entry `json:"accounts"`
}

type entry struct {
	// Secret is the password (password, basic) or the token (token).
	Secret string `json:"secret,omitempty"`
	// ClientSecret is the OAuth client's secret, when the client has one;
	// ClientID the client it is the secret of (empty in files written
	// before it was kept), so a new client_id in the config is not sent
	// another client's secret.
	ClientSecret string    `json:"client_secret,omitempty"`
	ClientID     string    `json:"client_id,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	SignedInAt   time.Time `json:"signed_in_at,omitzero"`
	// Obtained is when AccessToken was issued: a token that lives less
	// than twice RefreshBefore is refreshed at half its life instead, or
	// every use would refresh it.
	Obtained time.Time `json:"obtained,omitzero"`
	// Refused says why the provider refused a refresh (invalid_grant), or
	// a service the secret itself (Refused): the account needs a new
	// sign-in. An oauth2 account is not refreshed again until then.
	Refused string `json:"refused,omitempty"`
	// Identity is who signed in, as the provider's id_token said (its
	// email, else its subject): "" when the provider did not say.
	Identity string `json:"identity,omitempty"`
	// Discovered is what the sign-in to an MCP server's account found
	// (mcpauth.go): its endpoints and client id.
	Discovered *discovered `json:"discovered,omitempty"`
}

// fileStamp tells whether the file changed since it was read.
type fileStamp struct {
	ino     uint64
	size    int64
	modTime time.Time
}

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// checkMode refuses a credentials file others may read.
func checkMode(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("credentials file %s is readable by others (mode %04o, must be 0600); run: chmod 600 %s", path, perm, path)
	}
	return nil
}

// current returns the credentials, re-read when the file changed. The
// caller holds s.mu.
func (s *Store) current() (*file, error) {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.creds, s.stamp = &file{Accounts: map[string]*entry{}}, fileStamp{}
		return s.creds, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	if err := checkMode(s.path, fi); err != nil {
		return nil, err
	}
	if st := stampOf(fi); s.creds != nil && st == s.stamp {
		return s.creds, nil
	}
	f, st, err := readFile(s.path)
	if err != nil {
		return nil, err
	}
	s.creds, s.stamp = f, st
	return f, nil
}

func readFile(path string) (*file, fileStamp, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Accounts: map[string]*entry{}}, fileStamp{}, nil
	}
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("credentials file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("credentials file: %w", err)
	}
	if err := checkMode(path, fi); err != nil {
		return nil, fileStamp{}, err
	}
	f := &file{}
	if err := json.NewDecoder(fh).Decode(f); err != nil {
		// the message of a JSON error never quotes the file's content
		return nil, fileStamp{}, fmt.Errorf("credentials file %s is not valid JSON: %w", path, err)
	}
	if f.Accounts == nil {
		f.Accounts = map[string]*entry{}
	}
	for name, e := range f.Accounts {
		if e == nil {
			delete(f.Accounts, name) // "name": null, an edit by hand: not signed in
		}
	}
	return f, stampOf(fi), nil
}

// update changes the credentials under an exclusive lock shared with
// every keep process, re-reading the file first so a change another
// process made meanwhile (a rotated refresh token) is never overwritten.
// The caller holds s.mu.
func (s *Store) update(change func(f *file) error) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	unlock, err := lockFile(context.Background(), s.path+".lock")
	if err != nil {
		return fmt.Errorf("credentials file lock: %w", err)
	}
	defer unlock()
	f, _, err := readFile(s.path)
	if err != nil {
		return err
	}
	if err := change(f); err != nil {
		return err
	}
	if err := writeAtomic(s.path, f); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	s.creds, s.stamp = f, stampOf(fi)
	return nil
}

// lockFile takes an exclusive flock on path, shared with every keep
// process (and every other open of it in this one), until unlock; it
// gives up when ctx ends.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	got := make(chan error) // unbuffered: a lock taken after ctx ended is let go, not lost
	abandon := make(chan struct{})
	go func() {
		err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX)
		select {
		case got <- err:
		case <-abandon:
			fh.Close() // the lock, if taken, goes with the descriptor
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			fh.Close()
			return nil, err
		}
		return func() { fh.Close() }, nil
	case <-ctx.Done():
		close(abandon)
		return nil, ctx.Err()
	}
}

// refreshLock is the lock one account's refresh is made under, in every
// process: the refresh token it spends is read under it and the one it
// gets written before it is let go, so no two refreshes present the same
// refresh token (providers that rotate them take a second use as theft and
// end the grant). One file per account, so a hung provider holds up only
// its own accounts.
func (s *Store) refreshLock(name string) string {
	return filepath.Join(filepath.Dir(s.path), "."+filepath.Base(s.path)+"."+name+".refresh.lock")
}

// resolved is path with its symlinks followed, so the file they name is
// replaced rather than the link: keep may find credentials.json linked to
// where the person keeps it. A link to nowhere names where the file is
// to be.
func resolved(path string) string {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path
		}
		to, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return path
}

// beforeRename lets a test stop a write where a crash would: the new
// content is on disk in the temporary file, the old file untouched.
var beforeRename func() error

// writeAtomic replaces path with f (the caller holds its lock): a
// temporary file in the same folder, mode 0600, written and synced,
// renamed over the old one, the folder synced. A reader (or a crash) sees
// the old file or the new, never a mix.
func writeAtomic(path string, f *file) error {
	path = resolved(path)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	dir := filepath.Dir(path)
	// a writer killed before its rename left its temporary file, secrets
	// and all; every writer holds the file's lock, so any left now is such
	pattern := ".credentials-" + filepath.Base(path) + "-*.tmp"
	if !strings.ContainsAny(filepath.Base(path), `*?[\`) {
		left, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, l := range left {
			os.Remove(l)
		}
	}
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
