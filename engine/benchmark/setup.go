package benchmark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"keep/engine"
	"keep/engine/config"
	"keep/storage"
)

// keepEngine is a real engine on a temporary database, as keep runs one:
// storage.Open's durable pragmas, every connector from the config, the real
// clock.
type keepEngine struct {
	e    *engine.Engine
	db   *storage.DB
	path string
	root string
	cfg  config.Config
}

// newEngine opens dir/keep.db and an engine on it, the files connector
// rooted at dir/root, mutations allowed without asking, and http allowed
// to 127.0.0.1 (the in-process servers the measures talk to).
func newEngine(ctx context.Context, dir string) (*keepEngine, error) {
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	cfg := benchConfig(root)
	path := filepath.Join(dir, "keep.db")
	db, err := storage.Open(ctx, storage.Opts{Path: path, Logger: quiet})
	if err != nil {
		return nil, err
	}
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{})
	if err != nil {
		db.Close()
		return nil, err
	}
	e, err := engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(cfg.Policy), Logger: quiet})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &keepEngine{e: e, db: db, path: path, root: root, cfg: cfg}, nil
}

func benchConfig(root string) config.Config {
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{root}
	cfg.Connectors.Sheets.Roots = []string{root}
	cfg.Connectors.HTTP.AllowHosts = []string{"127.0.0.1"}
	cfg.Policy.DefaultMutationMode = engine.GrantAllow
	return cfg
}

// close stops the engine, if started, before it closes the database: a
// measure that returns early (an error, a blocked workflow) would leave it
// running on a closed database, in a directory about to be removed.
func (k *keepEngine) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return errors.Join(k.e.Stop(ctx), k.db.Close())
}

func (k *keepEngine) deploy(ctx context.Context, name, src string) error {
	_, err := k.e.Deploy(ctx, name+".js", []byte(src), "")
	return err
}
