package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"keep/engine"
	"keep/engine/config"
	"keep/storage"
)

// TestAccountsOverTheSocket: a TUI attached to a daemon lists the daemon's
// accounts and their state, never a secret.
func TestAccountsOverTheSocket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Path = filepath.Join(dir, "config.toml")
	cfg.Connectors.Files.Roots = []string{dir}
	cfg.Connectors.Sheets.Roots = []string{dir}
	cfg.Accounts = map[string]config.Account{"api": {Kind: "token"}, "mail": {Kind: "password", Username: "me@example.com"}}
	if err := os.WriteFile(cfg.CredentialsPath(), []byte(`{"accounts":{"api":{"secret":"tok-socket-secret"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	accts, err := engine.OpenAccounts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(dir, "keep.db"), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Logger: logger, Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "kd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	srv, err := Serve(ctx, wholeOf(e), SocketPath(filepath.Join(sockDir, "keep.db")), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	c, err := Dial(SocketPath(filepath.Join(sockDir, "keep.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var _ engine.AccountLister = c
	got, err := c.Accounts(ctx)
	if err != nil || len(got) != 2 || got[0].Name != "api" || got[0].State != engine.AccountOK || got[1].State != engine.AccountNeedsSignIn {
		t.Fatalf("accounts over the socket = %+v, %v", got, err)
	}
}
