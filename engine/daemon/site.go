package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"keep/engine"
	"keep/engine/authoring/model"
)

// Site is one keep process's place on disk: a database, its config, and
// what the process opened from them (the log, the accounts, connectors, an
// engine). Every front end (the TUI, keep --daemon, each command) gets hold
// of the engine through Site.Get, so how a process finds the daemon, waits
// for one starting, or opens the database itself is written once, here.
// Close releases everything, last opened first.
type Site struct {
	o SiteOpts

	cfg     *engine.Config
	accts   *engine.AccountStore
	log     *slog.Logger
	closers []func()
}

// SiteOpts name the site. Stderr hears what a person waiting should know
// ("waiting for the keep daemon …"); nil: nothing is said.
type SiteOpts struct {
	DBPath     string
	ConfigPath string
	// ConfigSet: the config path was named (--config), so the file must exist.
	ConfigSet bool
	Stderr    io.Writer
}

// NewSite returns the site of o; nothing is opened until asked for.
func NewSite(o SiteOpts) *Site {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return &Site{o: o}
}

// DBPath is the database the site stands on.
func (s *Site) DBPath() string { return s.o.DBPath }

// DemoDir is the folder the embedded demo works in, under the data
// directory: a files root of its own, so the demo never needs ~/Keep.
func (s *Site) DemoDir() string { return filepath.Join(filepath.Dir(s.o.DBPath), "demo") }

func (s *Site) onClose(f func()) { s.closers = append(s.closers, f) }

// Close releases what the site opened, last first.
func (s *Site) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Config loads the config file once: a missing file at the default path
// means every default; one named with --config must exist.
func (s *Site) Config() (engine.Config, error) {
	if s.cfg != nil {
		return *s.cfg, nil
	}
	cfg, err := engine.LoadConfig(s.o.ConfigPath, s.o.ConfigSet)
	if err != nil {
		return cfg, err
	}
	s.cfg = &cfg
	return cfg, nil
}

// Accounts opens the accounts of the config once.
func (s *Site) Accounts() (*engine.AccountStore, error) {
	if s.accts != nil {
		return s.accts, nil
	}
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	a, err := engine.OpenAccounts(cfg)
	if err != nil {
		return nil, err
	}
	s.accts = a
	return a, nil
}

// Logger writes to keep.log next to the database, never the terminal (the
// TUI owns it, and the CLI's output is its answer), with every held secret
// redacted. Nothing is logged if the file cannot be opened.
func (s *Site) Logger() *slog.Logger {
	if s.log == nil {
		s.log = s.openLog()
	}
	return s.log
}

func (s *Site) openLog() *slog.Logger {
	path := filepath.Join(filepath.Dir(s.o.DBPath), "keep.log")
	maxMB := engine.DefaultConfig().Retention.LogMaxMB
	if cfg, err := s.Config(); err == nil {
		maxMB = cfg.Retention.LogMaxMB
	}
	logger, closer, err := engine.OpenLog(path, maxMB, slog.LevelInfo)
	if err != nil {
		return slog.New(slog.DiscardHandler)
	}
	s.onClose(func() { closer.Close() })
	if cfg, err := s.Config(); err == nil {
		accts, _ := s.Accounts()
		logger = engine.RedactLogs(logger, engine.HeldSecrets(cfg, accts))
	}
	return logger.With("pid", os.Getpid())
}

// Registry is the config's connectors, as the engine builds them, for the
// commands that run no engine on the database (help api, try, new, edit).
func (s *Site) Registry() (*engine.Registry, engine.Config, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, cfg, err
	}
	accts, err := s.Accounts()
	if err != nil {
		return nil, cfg, err
	}
	roots := cfg.Connectors.Files.Roots
	cfg.Connectors.Files.Roots = append(slices.Clone(roots), s.DemoDir()) // as open builds it
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: s.o.DBPath, ConfigPath: s.o.ConfigPath, Accounts: accts, Logger: s.Logger()})
	cfg.Connectors.Files.Roots = roots
	if err == nil {
		s.onClose(func() { reg.Close() })
	}
	return reg, cfg, err
}

// Chat is the client of the config's [llm], which keep new and keep edit
// draft with; without one, the error says what to add, and where. A
// client with no key is noted on Stderr: a local model needs none, and a
// hosted one would answer 401.
func (s *Site) Chat() (*model.Chat, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	chat, err := model.ChatFrom(cfg.LLM)
	if errors.Is(err, model.ErrNoLLM) {
		return nil, fmt.Errorf("%w\n(config file: %s)", err, s.o.ConfigPath)
	}
	if err == nil && chat.APIKey == "" {
		why := "[llm] names no api_key_env"
		if cfg.LLM.APIKeyEnv != "" {
			why = "$" + cfg.LLM.APIKeyEnv + " is empty"
		}
		fmt.Fprintf(s.o.Stderr, "keep: note: %s, so keep sends no key to %s\n", why, chat.URL)
	}
	return chat, err
}

// LoadOptions is what engine.LoadScript needs to check a file against the
// connectors of the config, as the engine builds it (engine.loadOptions).
func (s *Site) LoadOptions(src []byte) (engine.LoadOptions, error) {
	cfg, err := s.Config()
	if err != nil {
		return engine.LoadOptions{}, err
	}
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: s.o.DBPath, Logger: s.Logger()})
	if err != nil {
		return engine.LoadOptions{}, err
	}
	s.onClose(func() { reg.Close() })
	// only the MCP servers src names are waited for: a server that does
	// not answer costs a file that does not use it nothing
	engine.AwaitMCPTools(context.Background(), reg, src)
	return engine.LoadOptionsOf(reg, cfg.Policy.MinProducerInterval.Duration), nil
}

// watchAccounts lifts the auth blocks of an account when keep auth login,
// run in another process, signs in to it while this one holds the engine.
func (s *Site) watchAccounts(ctx context.Context, e *engine.Engine) {
	accts, err := s.Accounts()
	if err != nil || len(accts.Names()) == 0 {
		return
	}
	logger := s.Logger()
	err = accts.Watch(ctx, func(names []string) {
		for _, name := range names {
			resumed, err := e.SignedIn(context.WithoutCancel(ctx), name)
			if err != nil {
				logger.Error("resuming after a sign-in", "account", name, "err", err)
				continue
			}
			logger.Info("signed in", "account", name, "resumed", resumed)
		}
	})
	if err != nil {
		logger.Error("watching the credentials file", "err", err)
	}
}

// desktopNotify is notify_user's desktop side: notify-send where it exists
// (an open TUI shows it as a toast: Subscribers.NotifyUser).
func desktopNotify(title, text string) {
	path, err := exec.LookPath("notify-send")
	if err != nil {
		return
	}
	_ = exec.Command(path, "--app-name=keep", "--", "keep: "+title, text).Run()
}
