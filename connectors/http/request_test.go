package http_test

import (
	"context"
	"encoding/json"
	"io"
	nethttp "net/http"
	"strings"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

func TestRequest(t *testing.T) {
	t.Parallel()

	t.Run("the idempotency key, json and headers reach the server", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			io.WriteString(w, `{"id":"t1"}`)
		})
		got, err := post(context.Background(), connector(t, keephttp.Config{}), map[string]any{
			"method":  "put",
			"url":     p.URL + "/things/1",
			"headers": map[string]any{"X-Team": "ops", "Idempotency-Key": "from-the-script"},
			"json":    map[string]any{"name": "Ada"},
		})
		if err != nil {
			t.Fatal(err)
		}
		req, body := p.lastRequest()
		if key := req.Header.Get("Idempotency-Key"); key != "mut-42" {
			t.Fatalf("Idempotency-Key %q, want the host's", key)
		}
		if req.Method != "PUT" || req.Header.Get("X-Team") != "ops" || req.Header.Get("Content-Type") != "application/json" || body != `{"name":"Ada"}` {
			t.Fatalf("server saw %s %v %q", req.Method, req.Header, body)
		}
		m := got.(map[string]any)
		if m["status"] != int64(201) || m["json"].(map[string]any)["id"] != "t1" || m["body"] != `{"id":"t1"}` || m["truncated"] != false {
			t.Fatalf("result %v", m)
		}
		if m["headers"].(map[string]any)["content-type"] != "application/json" {
			t.Fatalf("headers %v", m["headers"])
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("result is not JSON-shaped: %v", err)
		}
	})

	t.Run("a raw body is sent as is", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(204))
		_, err := post(context.Background(), connector(t, keephttp.Config{}), map[string]any{
			"method": "DELETE", "url": p.URL, "body": "plain text",
		})
		if err != nil {
			t.Fatal(err)
		}
		if req, body := p.lastRequest(); req.Method != "DELETE" || body != "plain text" {
			t.Fatalf("server saw %s %q", req.Method, body)
		}
	})

	t.Run("an oversize body after a 2xx is still applied, cut and flagged", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
			io.WriteString(w, strings.Repeat("x", 100))
		})
		got, err := post(context.Background(), connector(t, keephttp.Config{MaxBody: 10}), map[string]any{"url": p.URL})
		if err != nil {
			t.Fatal(err)
		}
		m := got.(map[string]any)
		if m["body"] != strings.Repeat("x", 10) || m["truncated"] != true || m["json"] != nil {
			t.Fatalf("result %v", m)
		}
	})

	t.Run("a same-host 307 is followed with the body and the key", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
			if r.URL.Path == "/old" {
				nethttp.Redirect(w, r, "/new", nethttp.StatusTemporaryRedirect)
				return
			}
			w.WriteHeader(200)
		})
		got, err := post(context.Background(), connector(t, keephttp.Config{}), map[string]any{"url": p.URL + "/old", "body": "b"})
		if err != nil {
			t.Fatal(err)
		}
		req, body := p.lastRequest()
		if got.(map[string]any)["status"] != int64(200) || req.URL.Path != "/new" || body != "b" || req.Header.Get("Idempotency-Key") != "mut-42" {
			t.Fatalf("server saw %s %q %v", req.URL.Path, body, req.Header)
		}
	})
}

func TestGet(t *testing.T) {
	t.Parallel()

	t.Run("a body that is not JSON has a null json", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "hello") })
		got, err := get(context.Background(), connector(t, keephttp.Config{}), map[string]any{"url": p.URL})
		if err != nil {
			t.Fatal(err)
		}
		m := got.(map[string]any)
		if m["body"] != "hello" || m["json"] != nil || m["status"] != int64(200) {
			t.Fatalf("result %v", m)
		}
	})

	t.Run("the script's headers are sent and no idempotency key", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(200))
		_, err := get(context.Background(), connector(t, keephttp.Config{}), map[string]any{
			"url": p.URL, "headers": map[string]any{"Accept": "application/json"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if req, _ := p.lastRequest(); req.Header.Get("Accept") != "application/json" || req.Header.Get("Idempotency-Key") != "" {
			t.Fatalf("server saw %v", req.Header)
		}
	})

	t.Run("a redirect to a host outside allow_hosts is returned, not followed", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(302, "Location", "http://evil.test/"))
		c := connector(t, keephttp.Config{AllowHosts: []string{"127.0.0.1"}})
		got, err := get(context.Background(), c, map[string]any{"url": p.URL})
		if err != nil {
			t.Fatal(err)
		}
		if got.(map[string]any)["status"] != int64(302) {
			t.Fatalf("result %v", got)
		}
	})
}

func TestAllowHosts(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name  string
		allow []string
		url   string
		ok    bool
	}{
		{"a listed host is allowed on any port", []string{"API.example.com"}, "https://api.example.com:8443/x", true},
		{"a listed host and port allows only that port", []string{"api.example.com:8443"}, "https://api.example.com/x", false},
		{"a wildcard allows subdomains", []string{"*.example.com"}, "https://a.b.example.com/", true},
		{"a wildcard does not allow the bare domain", []string{"*.example.com"}, "https://example.com/", false},
		{"a suffix is not a subdomain", []string{"*.example.com"}, "https://badexample.com/", false},
		{"an empty list allows any host", nil, "https://anything.test/", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A refused port stands in for the host: allowed calls are
			// transient, refused ones are permission errors.
			c := connector(t, keephttp.Config{AllowHosts: tc.allow, Client: &nethttp.Client{Transport: refuseAll{}}})
			_, err := get(context.Background(), c, map[string]any{"url": tc.url})
			if got := connectors.ClassOf(err) != connectors.Permission; got != tc.ok {
				t.Fatalf("allowed %v (%v), want %v", got, err, tc.ok)
			}
		})
	}
}

// refuseAll is a transport that never connects, so allow-list tests need
// no network.
type refuseAll struct{}

func (refuseAll) RoundTrip(*nethttp.Request) (*nethttp.Response, error) {
	return nil, io.ErrUnexpectedEOF
}

func TestMethods(t *testing.T) {
	t.Parallel()
	c := connector(t, keephttp.Config{})
	var req connectors.Method
	for _, m := range c.Methods() {
		if m.Name == "request" {
			req = m
		}
	}
	params := map[string]any{"method": "post", "url": "https://bob:secret@API.example.com:8443/v1/things?x=1", "json": map[string]any{"note": strings.Repeat("n", 300)}}

	t.Run("the scope is the host name without the port", func(t *testing.T) {
		t.Parallel()
		if got := req.Scope(params); got != "api.example.com" {
			t.Fatalf("scope %q", got)
		}
	})

	t.Run("the preview shows method, url and a cut json without the userinfo", func(t *testing.T) {
		t.Parallel()
		got := req.Preview(params)
		if !strings.HasPrefix(got, `POST https://REDACTED@API.example.com:8443/v1/things?x=1 json: {"note":"nnn`) || !strings.HasSuffix(got, "…") || strings.Contains(got, "secret") || strings.Contains(got, "bob") {
			t.Fatalf("preview %q", got)
		}
		if len(got) > 300 {
			t.Fatalf("preview is %d long", len(got))
		}
	})

	t.Run("the check names the url", func(t *testing.T) {
		t.Parallel()
		if got := req.Check(map[string]any{"url": "https://host/path"}); got != "check https://host/path for the change" {
			t.Fatalf("check %q", got)
		}
	})

	// url.URL.Redacted masked a password only: a token written as the
	// username (https://TOKEN@host/, as git and many webhooks take one)
	// showed in full, in the approval.requested event too.
	t.Run("a token as the username shows in neither the preview nor the check", func(t *testing.T) {
		t.Parallel()
		p := map[string]any{"method": "POST", "url": "https://T0KEN-abc@hooks.example.com/new?page=2#access_token=T0KEN-frag"}
		for _, got := range []string{req.Preview(p), req.Check(p)} {
			if strings.Contains(got, "T0KEN") || !strings.Contains(got, "https://REDACTED@hooks.example.com/new?page=2") {
				t.Errorf("shown as %q", got)
			}
		}
	})

	t.Run("it offers resource inputs", func(t *testing.T) {
		t.Parallel()
		r := connectors.NewRegistry()
		r.Register(c)
		if err := r.CheckInput("http", "resource"); err != nil {
			t.Fatal(err)
		}
	})
}
