package sheets

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
)

// bundle is what every test starts from: a connector rooted in a temp dir.
type bundle struct {
	c    *Connector
	root string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	root := t.TempDir()
	c, err := New(Config{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	c.UseSecret(testSecret)
	return &bundle{c: c, root: root}
}

// testSecret is the host's secret the tests' connectors get.
var testSecret = []byte("the database's secret")

// tag is what the hidden column holds for key under testSecret: worked out
// here rather than asked of the connector, so that a change of the format
// (which would orphan every row written before it) fails a test.
func tag(key string) string {
	h := hmac.New(sha256.New, testSecret)
	h.Write([]byte("keep sheets row\x00" + key))
	return "h1." + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

func (b *bundle) do(t *testing.T, method, key string, params map[string]any) (any, error) {
	t.Helper()
	return b.c.Do(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: key})
}

func (b *bundle) mustDo(t *testing.T, method, key string, params map[string]any) map[string]any {
	t.Helper()
	res, err := b.do(t, method, key, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res.(map[string]any)
}

func (b *bundle) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(b.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wantClass fails unless err is a connector error of class want whose
// message contains every fragment.
func wantClass(t *testing.T, err error, want connectors.Class, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var ce *connectors.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want a *connectors.Error", err, err)
	}
	if ce.Class != want {
		t.Fatalf("got class %s (%v), want %s", ce.Class, err, want)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

func sheet(name string) map[string]any { return map[string]any{"spreadsheet": name} }

func with(p map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestConnector(t *testing.T) {
	t.Parallel()

	t.Run("It registers as the sheets source with the row type", func(t *testing.T) {
		t.Parallel()
		r := connectors.NewRegistry()
		r.Register(setup(t).c)
		if err := r.CheckInput("sheets", "row"); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"rows", "appendRow", "updateRow"} {
			if _, _, err := r.Lookup("sheets", m); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("Mutations declare a scope, a preview and a check; reads don't mutate", func(t *testing.T) {
		t.Parallel()
		for _, m := range setup(t).c.Methods() {
			if m.Name == "rows" {
				if m.Kind != connectors.Read {
					t.Errorf("rows is %s", m.Kind)
				}
				continue
			}
			if m.Kind != connectors.Mutate || m.Scope == nil || m.Preview == nil || m.Check == nil {
				t.Errorf("%s: %+v", m.Name, m)
			}
		}
	})

	t.Run("Defaults are ~/Keep and 10 MiB, with ~ expanded", func(t *testing.T) {
		t.Parallel()
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(home, "Keep"); len(c.roots) != 1 || c.roots[0] != want {
			t.Errorf("roots %v, want [%s]", c.roots, want)
		}
		if c.maxSize != 10<<20 {
			t.Errorf("max size %d", c.maxSize)
		}
	})

	t.Run("An unknown method is a logic error", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).do(t, "deleteRow", "", sheet("a.csv"))
		wantClass(t, err, connectors.Logic, "deleteRow")
	})
}
