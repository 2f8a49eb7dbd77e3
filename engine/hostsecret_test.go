package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"keep/connectors"
	"keep/engine/config"
	"keep/storage"
)

// keyedStub records the secrets the host hands it.
type keyedStub struct{ got [][]byte }

func (k *keyedStub) Name() string                                     { return "keyedstub" }
func (k *keyedStub) Methods() []connectors.Method                     { return nil }
func (k *keyedStub) Do(context.Context, connectors.Call) (any, error) { return nil, nil }
func (k *keyedStub) UseSecret(s []byte)                               { k.got = append(k.got, bytes.Clone(s)) }

// A connector that derives names from the host's keys (the mail
// connector's Message-IDs) is handed one secret per database, the same at
// every start, so a send a crash left unknown is found again after it.
func TestKeyedConnectorsGetTheDatabasesSecret(t *testing.T) {
	ctx := context.Background()
	start := func(dbPath string) []byte {
		t.Helper()
		db, err := storage.Open(ctx, storage.Opts{Path: dbPath})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		cfg := config.Default()
		reg, err := Connectors(cfg, ConnectorOpts{DBPath: dbPath})
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Close()
		stub := &keyedStub{}
		reg.Register(stub)
		if _, err := New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(cfg.Policy)}); err != nil {
			t.Fatal(err)
		}
		if len(stub.got) != 1 || len(stub.got[0]) < 32 {
			t.Fatalf("the connector was handed %d secrets (%x), want one of 32 bytes", len(stub.got), stub.got)
		}
		return stub.got[0]
	}
	one := filepath.Join(t.TempDir(), "keep.db")
	first, again := start(one), start(one)
	if !bytes.Equal(first, again) {
		t.Fatalf("a restart handed another secret: %x, then %x", first, again)
	}
	if other := start(filepath.Join(t.TempDir(), "keep.db")); bytes.Equal(first, other) {
		t.Fatalf("two databases share the secret %x", first)
	}
}
