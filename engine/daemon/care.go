package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"keep/engine"
)

// The care of the database, done where it must be: through the daemon that
// holds it (its retention policy, its consistent copy), else here.

// GC applies the retention policy now: the daemon's, when one holds the
// database, else the config's on an engine opened here.
func (s *Site) GC(ctx context.Context) (engine.GCReport, error) {
	if c, ok := s.Attach(); ok {
		return c.GC(ctx)
	}
	cfg, err := s.Config()
	if err != nil {
		return engine.GCReport{}, err
	}
	e, err := s.open(ctx, nil)
	if err != nil {
		return engine.GCReport{}, err
	}
	return e.GC(ctx, engine.RetentionFrom(cfg.Retention))
}

// Backup writes a consistent copy of the database to path (absolute): the
// daemon takes it when one holds the database; otherwise a snapshot is read
// directly (no engine needed: reading never takes the engine lock).
func (s *Site) Backup(ctx context.Context, path string) error {
	// a file in the way is a refusal, as for keep init and keep edit (exit
	// 3), not a failure; the backup's own O_EXCL still guards the race
	if _, err := os.Lstat(path); err == nil {
		return &refusal{msg: fmt.Sprintf("backup: %s already exists; not overwriting it", path)}
	}
	if c, ok := s.Attach(); ok {
		return c.Backup(ctx, path)
	}
	if _, err := os.Stat(s.o.DBPath); errors.Is(err, fs.ErrNotExist) {
		// a bare "stat PATH: no such file" reads as if the backup's own
		// path were wrong
		return fmt.Errorf("backup: no database at %s: nothing to back up (--db or KEEP_DB names the database to back up)", s.o.DBPath)
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return engine.BackupFile(ctx, s.o.DBPath, path)
}

// refusal is a refusal the site decides (exit 3 in the CLI): its message as
// written, over engine.ErrRefused.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return engine.ErrRefused }

// Service is the service of the running binary on the site's database and
// config (keep service install, uninstall, status).
func (s *Site) Service() (engine.ServiceOpts, error) {
	bin, err := os.Executable()
	if err != nil {
		return engine.ServiceOpts{}, err
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return engine.ServiceOpts{}, err
	}
	db, err := filepath.Abs(s.o.DBPath)
	if err != nil {
		return engine.ServiceOpts{}, err
	}
	cfgPath, err := filepath.Abs(s.o.ConfigPath)
	if err != nil {
		return engine.ServiceOpts{}, err
	}
	return engine.ServiceOpts{Binary: bin, DB: db, Config: cfgPath}, nil
}

// Installable refuses a service that could not run: a binary go run built
// (the build cache is emptied), a database another engine holds (the
// service's daemon would be refused), a config naming variables this shell
// does not set (the service manager's environment has none of the shell's).
// What the config names and the shell sets goes into so.Env.
func (s *Site) Installable(ctx context.Context, so *engine.ServiceOpts) error {
	if err := engine.CheckServiceBinary(so.Binary); err != nil {
		return &refusal{msg: "service install: " + err.Error()}
	}
	pid, held, err := EngineHolder(s.o.DBPath)
	if err != nil {
		return err
	}
	if c, ok := s.Attach(); ok {
		pid, held = c.Info().PID, true
	}
	// the engine holding the database may be this very service, installed
	// again (the same: nothing to do; changed: rewritten and restarted,
	// its daemon letting go first): only another engine is refused
	if held && !s.isService(ctx, *so, pid) {
		return &refusal{msg: fmt.Sprintf("service install: a keep engine (pid %d) holds %s, and the service's would be refused; "+
			"stop it first (if it is this service: systemctl --user stop keep.service)", pid, s.o.DBPath)}
	}
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	env, missing := engine.ServiceEnvOf(cfg).Carry(nil)
	if len(missing) > 0 {
		return &refusal{msg: fmt.Sprintf("service install: the config %s reads secrets from %s, not set here; "+
			"set them in this shell and install again (the service gets them in a file only you can read)", cfg.Path, strings.Join(missing, ", "))}
	}
	so.Env = env
	return nil
}

// isService says whether pid is the daemon of keep's installed service,
// running as the service manager reports it. A manager that cannot say
// (no user session) counts as no.
func (s *Site) isService(ctx context.Context, so engine.ServiceOpts, pid int) bool {
	st, err := engine.ServiceStatus(ctx, so)
	if err != nil {
		s.Logger().Info("service status", "err", err)
		return false
	}
	return st.Installed && st.Running && pid > 0 && st.PID == pid
}
