package daemon

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"keep/engine"
)

// A long-lived engine (the daemon, the TUI's) takes a new config by
// starting again on it: the process ends what it runs cleanly and replaces
// itself with keep started the same way (Reexec), so every part is built
// from the new file exactly as at a start, and nothing is half-swapped.

// ReexecNote, when set, is what a reload says once keep has started again
// on the new config: run's caller replaces the process with a new keep
// (the same arguments) once everything this one opened is closed.
var ReexecNote string

// reloadedEnv carries the reload's words to the new process.
const reloadedEnv = "KEEP_RELOADED"

// Reexec replaces this process with keep started again, saying note.
func Reexec(note string) {
	exe, err := os.Executable()
	if err == nil {
		env := append(os.Environ(), reloadedEnv+"="+note)
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintf(os.Stderr, "keep: starting again on the new config: %v\n", err)
}

// ReloadedNote is the note of the reload that started this process, once.
func ReloadedNote() string {
	note := os.Getenv(reloadedEnv)
	os.Unsetenv(reloadedEnv)
	return note
}

// WatchConfig reloads the config when its file changes (and, where hup, on
// SIGHUP: a daemon's convention; a TUI leaves SIGHUP to mean its terminal
// hung up): a broken one is refused and the running one kept (said in the
// log and to every front end); one that changes keys is said, key by key
// (never a value), and the engine starts again on it (restart ends this
// run; ReexecNote starts keep again). Nothing polls.
func (s *Site) WatchConfig(ctx context.Context, e *engine.Engine, restart func(), hup bool) {
	logger := s.Logger()
	cur, err := s.Config()
	if err != nil {
		return
	}
	changes := make(chan struct{}, 1)
	poke := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	if hup {
		hups := make(chan os.Signal, 1)
		signal.Notify(hups, syscall.SIGHUP)
		go func() {
			defer signal.Stop(hups)
			for {
				select {
				case <-ctx.Done():
					return
				case <-hups:
					poke()
				}
			}
		}()
	}
	if err := engine.WatchConfig(ctx, s.o.ConfigPath, poke); err != nil {
		logger.Warn("the config file is not watched; send SIGHUP to reload it", "err", err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-changes:
			}
			// an editor writes in steps (truncate, write, rename): read
			// once the file has been quiet a moment, and an empty file
			// is one being written, not a config of defaults
			if !settle(ctx, changes, configSettle) {
				return
			}
			if fi, err := os.Stat(s.o.ConfigPath); err == nil && fi.Size() == 0 {
				logger.Info("the config file is empty; waiting for it to be written", "config", s.o.ConfigPath)
				continue
			}
			next, err := engine.LoadConfig(s.o.ConfigPath, s.o.ConfigSet)
			if err == nil {
				err = s.checkConfig(next)
			}
			if err != nil {
				logger.Error("config refused; the running config is kept", "config", s.o.ConfigPath, "err", err)
				e.Say(fmt.Sprintf("config refused, the running one kept: %v", err))
				continue
			}
			changed := engine.ConfigChanged(cur, next)
			if len(changed) == 0 {
				logger.Info("config read again: nothing changed", "config", s.o.ConfigPath)
				continue
			}
			note := "config reloaded: " + strings.Join(changed, ", ") + " changed"
			logger.Info("config changed; the engine starts again on it", "config", s.o.ConfigPath, "changed", changed)
			e.Say(note + "; starting again")
			ReexecNote = note
			restart()
			return
		}
	}()
}

// configSettle is how long the config file must be quiet before it is read.
const configSettle = 200 * time.Millisecond

// settle waits until no change has come for quiet; false if ctx ended.
func settle(ctx context.Context, changes <-chan struct{}, quiet time.Duration) bool {
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-changes:
			t.Reset(quiet)
		case <-t.C:
			return true
		}
	}
}

// checkConfig builds what the engine would build from cfg, so a config
// the engine could not start on is refused before anything stops.
func (s *Site) checkConfig(cfg engine.Config) error {
	cfg.Connectors.Files.Roots = append(slices.Clone(cfg.Connectors.Files.Roots), s.DemoDir())
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: s.o.DBPath, ConfigPath: s.o.ConfigPath, Logger: s.Logger()})
	if err != nil {
		return err
	}
	reg.Close()
	return nil
}

// WarnStaleEngine says when the engine running on this database runs on
// another config than the file this command read: a change it has not
// taken (a broken file it refused).
func (s *Site) WarnStaleEngine() {
	cfg, err := s.Config()
	if err != nil {
		return
	}
	api, ok := s.Attach()
	if !ok {
		return
	}
	info := api.Info()
	if info.Config != "" && info.Config != engine.ConfigDigest(cfg) {
		fmt.Fprintf(s.o.Stderr, "keep: note: the running engine (pid %d) runs on another config than %s; it reloads when the file changes (SIGHUP too), and refuses a broken one (see keep.log)\n",
			info.PID, s.o.ConfigPath)
	}
}
