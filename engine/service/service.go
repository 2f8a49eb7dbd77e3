// Package service installs keep as a per-user background service, so the
// daemon runs from login on: a systemd user unit on Linux, a launchd agent
// on macOS. It writes the unit and drives systemctl or launchctl; it never
// needs root.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Name is the unit's name (keep.service) and the agent's label stem.
const (
	unitName = "keep.service"
	label    = "keep.daemon"
)

// Opts say what to run and where the service manager lives. Zero fields
// take the running system's values.
type Opts struct {
	// Binary, DB and Config are absolute paths put into the unit.
	Binary, DB, Config string
	// Env is the environment the daemon gets (see Env.Carry): systemd reads
	// it from EnvFile, launchd from the plist, both written mode 0600
	// because it may hold secrets.
	Env map[string]string
	// GOOS picks systemd ("linux") or launchd ("darwin"); default runtime.GOOS.
	GOOS string
	// Home is the user's home; default os.UserHomeDir.
	Home string
	// ConfigHome is $XDG_CONFIG_HOME; default Home/.config.
	ConfigHome string
	// Run runs a service-manager command and returns its standard output;
	// default exec. Tests put a recording fake systemctl on PATH instead.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

func (o Opts) withDefaults() (Opts, error) {
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return o, fmt.Errorf("service: %w", err)
		}
		o.Home = h
	}
	if o.ConfigHome == "" {
		o.ConfigHome = os.Getenv("XDG_CONFIG_HOME")
		if o.ConfigHome == "" {
			o.ConfigHome = filepath.Join(o.Home, ".config")
		}
	}
	if o.Run == nil {
		o.Run = run
	}
	for name, p := range map[string]string{"binary": o.Binary, "database": o.DB, "config": o.Config} {
		if p != "" && !filepath.IsAbs(p) {
			return o, fmt.Errorf("service: the %s path %q is not absolute", name, p)
		}
	}
	switch o.GOOS {
	case "linux", "darwin":
		return o, nil
	}
	return o, fmt.Errorf("service: no user service manager known on %s (systemd on linux, launchd on darwin)", o.GOOS)
}

// writePrivate writes a file only its owner can read, never leaving it
// readable by others for a moment.
func writePrivate(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	return nil
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Path is where the unit (Linux) or the agent's plist (macOS) is written.
func Path(o Opts) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	if o.GOOS == "darwin" {
		return filepath.Join(o.Home, "Library", "LaunchAgents", label+".plist"), nil
	}
	return filepath.Join(o.ConfigHome, "systemd", "user", unitName), nil
}

// EnvFile is where a systemd unit's environment is written: beside keep's
// config, where its other secrets (credentials.json) live.
func EnvFile(o Opts) string { return filepath.Join(filepath.Dir(o.Config), "service.env") }

// File is the unit or plist text for o.
func File(o Opts) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	if o.Binary == "" || o.DB == "" || o.Config == "" {
		return "", errors.New("service: the binary, database and config paths are all needed")
	}
	if o.GOOS == "darwin" {
		return plist(o), nil
	}
	return unit(o), nil
}

// Outcome says what Install did.
type Outcome int

const (
	// Started: the unit was written (or was already as it would be
	// written, but not running) and the service started.
	Started Outcome = iota
	// Unchanged: the unit installed is the one Install would write and
	// the service runs: nothing was touched.
	Unchanged
	// Rewritten: a unit was installed with another binary, database,
	// config or environment: it was rewritten and the service restarted,
	// so what runs is what was asked for.
	Rewritten
)

// Install writes the unit and starts it now and at every login. Asked
// again it is idempotent: a service already installed as it would be
// written and running is left alone (Unchanged); one installed otherwise
// is rewritten and restarted (Rewritten), since enable --now would leave
// the old process running on the old file.
func Install(ctx context.Context, o Opts) (string, Outcome, error) {
	text, err := File(o)
	if err != nil {
		return "", Started, err
	}
	o, _ = o.withDefaults()
	path, _ := Path(o)
	env := ""
	if o.GOOS == "linux" && len(o.Env) > 0 {
		if env, err = envFile(o.Env); err != nil {
			return "", Started, err
		}
	}
	old, err := os.ReadFile(path)
	installed := err == nil
	same := installed && string(old) == text && sameEnv(o, env)
	running := false
	if installed {
		// a manager that cannot say counts as not running: the unit is
		// written and started, and its own error then says why
		st, err := Status(ctx, o)
		running = err == nil && st.Running
	}
	if same && running {
		return path, Unchanged, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", Started, fmt.Errorf("service: %w", err)
	}
	mode := os.FileMode(0o644)
	if len(o.Env) > 0 {
		mode = 0o600 // a plist carries the values itself
	}
	if env != "" {
		if err := writePrivate(EnvFile(o), env); err != nil {
			return "", Started, err
		}
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		return "", Started, fmt.Errorf("service: %w", err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile keeps an old file's mode
		return "", Started, fmt.Errorf("service: %w", err)
	}
	did := Started
	if installed && !same {
		did = Rewritten
	}
	if o.GOOS == "darwin" {
		// a loaded agent must be booted out before a changed plist counts
		_, _ = o.Run(ctx, "launchctl", "bootout", guiDomain()+"/"+label)
		if _, err := o.Run(ctx, "launchctl", "bootstrap", guiDomain(), path); err != nil {
			return path, did, fmt.Errorf("service: %w", err)
		}
		return path, did, nil
	}
	steps := [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", unitName}}
	if did == Rewritten && running {
		steps = [][]string{{"--user", "daemon-reload"}, {"--user", "enable", unitName}, {"--user", "restart", unitName}}
	}
	for _, args := range steps {
		if _, err := o.Run(ctx, "systemctl", args...); err != nil {
			return path, did, fmt.Errorf("service: %w", err)
		}
	}
	return path, did, nil
}

// sameEnv says whether the environment file holds env already (linux; a
// plist carries its environment in itself). No environment asked for is
// the same as none written: the unit then names no file.
func sameEnv(o Opts, env string) bool {
	if o.GOOS != "linux" || env == "" {
		return true
	}
	b, err := os.ReadFile(EnvFile(o))
	return err == nil && string(b) == env
}

// Uninstall stops the service, disables it and removes its file, and says
// whether there was one: a service that was never installed is no error,
// and nothing is asked of the service manager for it.
func Uninstall(ctx context.Context, o Opts) (path string, removed bool, err error) {
	o, err = o.withDefaults()
	if err != nil {
		return "", false, err
	}
	path, _ = Path(o)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if o.GOOS == "darwin" {
		_, _ = o.Run(ctx, "launchctl", "bootout", guiDomain()+"/"+label)
	} else if _, err := o.Run(ctx, "systemctl", "--user", "disable", "--now", unitName); err != nil {
		return path, false, fmt.Errorf("service: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return path, false, fmt.Errorf("service: %w", err)
	}
	if o.Config != "" {
		// the secrets Install carried go with the service
		if err := os.Remove(EnvFile(o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return path, false, fmt.Errorf("service: %w", err)
		}
	}
	if o.GOOS == "linux" {
		if _, err := o.Run(ctx, "systemctl", "--user", "daemon-reload"); err != nil {
			return path, false, fmt.Errorf("service: %w", err)
		}
	}
	return path, true, nil
}

// State is what `keep service status` says.
type State struct {
	Installed bool      `json:"installed"`
	Path      string    `json:"path"`
	Running   bool      `json:"running"`
	State     string    `json:"state"`          // systemd's ActiveState, launchd's state
	Since     time.Time `json:"since,omitzero"` // when it last became active
	PID       int       `json:"pid,omitempty"`  // the daemon's process, when running
}

// Status asks the service manager whether keep runs, and since when.
func Status(ctx context.Context, o Opts) (State, error) {
	o, err := o.withDefaults()
	if err != nil {
		return State{}, err
	}
	path, _ := Path(o)
	st := State{Path: path}
	if _, err := os.Stat(path); err != nil {
		st.State = "not installed"
		return st, nil
	}
	st.Installed = true
	if o.GOOS == "darwin" {
		out, err := o.Run(ctx, "launchctl", "print", guiDomain()+"/"+label)
		if err != nil {
			st.State = "not loaded"
			return st, nil
		}
		return launchdState(st, string(out)), nil
	}
	out, err := o.Run(ctx, "systemctl", "--user", "show", "-p", "ActiveState,ActiveEnterTimestamp,MainPID", unitName)
	if err != nil {
		return st, fmt.Errorf("service: %w", err)
	}
	return systemdState(st, string(out))
}

// systemdState reads `systemctl show` output: KEY=value lines.
func systemdState(st State, out string) (State, error) {
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "ActiveState":
			st.State = v
			st.Running = v == "active" || v == "reloading"
		case "MainPID":
			st.PID, _ = strconv.Atoi(v) // 0 when not running
		case "ActiveEnterTimestamp":
			if v == "" || v == "n/a" {
				continue
			}
			t, err := time.Parse("Mon 2006-01-02 15:04:05 MST", v)
			if err != nil {
				return st, fmt.Errorf("service: systemctl show: ActiveEnterTimestamp %q: %w", v, err)
			}
			st.Since = t
		}
	}
	if st.State == "" {
		return st, fmt.Errorf("service: systemctl show said nothing about ActiveState: %q", out)
	}
	return st, nil
}

// launchdState reads `launchctl print` output: "state = running", "pid = 123".
func launchdState(st State, out string) State {
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok {
			continue
		}
		switch k {
		case "state":
			if st.State == "" {
				st.State = v
				st.Running = v == "running"
			}
		case "pid":
			st.PID, _ = strconv.Atoi(v)
		}
	}
	return st
}

func guiDomain() string { return "gui/" + strconv.Itoa(os.Getuid()) }
