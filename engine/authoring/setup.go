package authoring

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"keep/engine"
)

// InitOpts is what keep init works on.
type InitOpts struct {
	// ConfigPath is the config file to write, or the one already there.
	ConfigPath string
	// Config is the config whose MCP servers and accounts a new setup's
	// keep.d.ts declares (keep's own --config); nil or failing: none.
	Config func() (engine.Config, error)
	// DBPath is the database whose neighbours cache the MCP tool lists.
	DBPath string
	Logger *slog.Logger
	// Out is told each thing done, one line each.
	Out io.Writer
	// Examples are the workflows a new setup starts with (keep/workflows,
	// which imports nothing of keep's: its tests drive the engine).
	Examples []Example
}

// Example is one example workflow file: its name and its text.
type Example struct {
	Name   string
	Source []byte
}

// Init writes a config file with every default (mode 0600), and beside it
// workflows/ with the examples and what keep generates for an editor
// (keep.d.ts, jsconfig.json).
//
// Where a config is already there the setup is the person's: the config and
// the workflows stay as they are, and only what keep generates is written
// again, from that config (keep.d.ts changes with keep's version and with
// the configured MCP servers).
func Init(o InitOpts) error {
	dir := filepath.Join(filepath.Dir(o.ConfigPath), "workflows")
	if _, err := os.Lstat(o.ConfigPath); err == nil {
		return refreshSetup(o, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := engine.WriteDefaultConfig(o.ConfigPath); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s\n", o.ConfigPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// never over a file already there
	for _, wf := range o.Examples {
		if err := writeNew(o.Out, filepath.Join(dir, wf.Name), wf.Source); err != nil {
			return err
		}
	}
	cfg := engine.DefaultConfig()
	if o.Config != nil {
		if loaded, err := o.Config(); err == nil {
			cfg = loaded
		}
	}
	if err := writeTypes(o, dir, cfg); err != nil {
		return err
	}
	if roots := engine.DefaultConfig().Connectors.Files.Roots; len(roots) > 0 {
		fmt.Fprintf(o.Out, "the files connector may touch: %s\n", strings.Join(roots, ", "))
	}
	fmt.Fprintln(o.Out, "next: keep validate FILE, then keep deploy FILE")
	return nil
}

// refreshSetup is Init where the config is there. A config that does not
// load is reported and nothing is written: the declarations of its MCP
// servers would be lost from keep.d.ts.
func refreshSetup(o InitOpts, dir string) error {
	cfg, err := engine.LoadConfig(o.ConfigPath, true)
	if err != nil {
		return fmt.Errorf("keep.d.ts not refreshed: %w", err)
	}
	fmt.Fprintf(o.Out, "kept %s (already there)\n", o.ConfigPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeTypes(o, dir, cfg); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "kept the workflows in %s as they are (only the first keep init writes the examples)\n", dir)
	return nil
}

// writeTypes writes keep.d.ts (always: it is generated, and replaced whole)
// and jsconfig.json (unless there is one) into dir, so an editor checks the
// workflows there. loaded's MCP servers are part of the API (their cached
// tool lists; `keep mcp tools NAME` refreshes one).
func writeTypes(o InitOpts, dir string, loaded engine.Config) error {
	cfg := engine.DefaultConfig()
	cfg.MCP, cfg.Accounts = loaded.MCP, loaded.Accounts
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: o.DBPath, Logger: o.Logger})
	if err != nil {
		if reg, err = engine.Connectors(engine.DefaultConfig(), engine.ConnectorOpts{}); err != nil {
			return err
		}
	}
	defer reg.Close()
	engine.AwaitMCPServers(context.Background(), reg, "")
	p := filepath.Join(dir, "keep.d.ts")
	dts := []byte(engine.BuildReference(reg).DTS())
	old, rerr := os.ReadFile(p)
	switch {
	case rerr == nil && bytes.Equal(old, dts):
		fmt.Fprintf(o.Out, "kept %s (up to date)\n", p)
	case rerr == nil:
		if err := writeReplacing(p, dts); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "refreshed %s\n", p)
	default:
		if err := writeReplacing(p, dts); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "wrote %s\n", p)
	}
	return writeNew(o.Out, filepath.Join(dir, "jsconfig.json"), []byte(engine.JSConfig))
}

// writeReplacing writes data to p (mode 0600) through a temporary file
// renamed over it: an editor reading it sees the old file or the new one,
// and a link at p is replaced, never written through.
func writeReplacing(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err == nil {
		if err = os.Chmod(f.Name(), 0o600); err == nil {
			err = os.Rename(f.Name(), p)
		}
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// writeNew writes a file that is not there yet (mode 0600) and says so; one
// already there is kept as it is.
func writeNew(out io.Writer, p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		fmt.Fprintf(out, "kept %s (already there)\n", p)
		return nil
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", p)
	return nil
}
