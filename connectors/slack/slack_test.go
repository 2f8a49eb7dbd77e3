package slack

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

// bundle is what every test starts from: a fake Slack and a connector
// pointed at it.
type bundle struct {
	f *fakeSlack
	c *Connector
}

func setup(t *testing.T, edit ...func(*Config)) *bundle {
	t.Helper()
	f := newFakeSlack(t)
	cfg := Config{
		APIBase:    f.srv.URL + "/api",
		Token:      f.token,
		WebhookURL: f.srv.URL + f.hookPath,
		Client:     f.srv.Client(),
	}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{f: f, c: c}
}

func (b *bundle) do(t *testing.T, method, key string, params map[string]any) (any, error) {
	t.Helper()
	res, err := b.c.Do(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: key})
	noSecrets(t, b.f, res, err)
	return res, err
}

func (b *bundle) mustDo(t *testing.T, method, key string, params map[string]any) map[string]any {
	t.Helper()
	res, err := b.do(t, method, key, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res.(map[string]any)
}

func (b *bundle) reconcile(t *testing.T, key string, params map[string]any) (connectors.Verdict, any, error) {
	t.Helper()
	v, res, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "post", Params: params, IdempotencyKey: key})
	noSecrets(t, b.f, res, err)
	return v, res, err
}

// noSecrets fails if the token or the webhook's secret path shows in a
// result or an error.
func noSecrets(t *testing.T, f *fakeSlack, res any, err error) {
	t.Helper()
	var seen []string
	if res != nil {
		data, _ := json.Marshal(res)
		seen = append(seen, string(data))
	}
	if err != nil {
		seen = append(seen, err.Error())
	}
	for _, s := range seen {
		for _, secret := range []string{f.token, "SECRET", "HOOKSECRET", f.hookPath} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows the secret %q", s, secret)
			}
		}
	}
}

func wantClass(t *testing.T, err error, want connectors.Class) *connectors.Error {
	t.Helper()
	var ce *connectors.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want a %s *connectors.Error", err, err, want)
	}
	if ce.Class != want {
		t.Fatalf("got class %s (%v), want %s", ce.Class, err, want)
	}
	return ce
}

func params(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestConnector(t *testing.T) {
	t.Parallel()

	t.Run("It registers as the slack source with message and reaction", func(t *testing.T) {
		t.Parallel()
		r := connectors.NewRegistry()
		r.Register(setup(t).c)
		for _, typ := range []string{"message", "reaction"} {
			if err := r.CheckInput("slack", typ); err != nil {
				t.Fatal(err)
			}
		}
		if _, m, err := r.Lookup("slack", "post"); err != nil || m.Kind != connectors.Mutate || m.Scope == nil || m.Preview == nil || m.Check == nil {
			t.Fatalf("post: %+v %v", m, err)
		}
		if _, m, err := r.Lookup("slack", "history"); err != nil || m.Kind != connectors.Read {
			t.Fatalf("history: %+v %v", m, err)
		}
	})

	t.Run("Defaults fill the zero config", func(t *testing.T) {
		t.Parallel()
		c, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		if c.apiBase != "https://slack.com/api" || c.timeout != 30*time.Second || c.client == nil {
			t.Fatalf("%+v", c)
		}
	})

	t.Run("A bad API base or webhook URL is refused without quoting the webhook", func(t *testing.T) {
		t.Parallel()
		if _, err := New(Config{APIBase: "slack.com/api"}); err == nil {
			t.Fatal("accepted a base without a scheme")
		}
		_, err := New(Config{WebhookURL: "hooks.slack.com/services/HOOKSECRET"})
		if err == nil || strings.Contains(err.Error(), "HOOKSECRET") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("An unknown method is a logic error", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).do(t, "delete", "", nil)
		wantClass(t, err, connectors.Logic)
	})
}
