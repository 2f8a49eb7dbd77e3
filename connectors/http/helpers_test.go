package http_test

import (
	"context"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// peer is a local server that records what reached it.
type peer struct {
	*httptest.Server
	hits atomic.Int32
	mu   sync.Mutex
	last *nethttp.Request
	body string
}

// lastRequest returns the last request seen and its body.
func (p *peer) lastRequest() (*nethttp.Request, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.body
}

// newPeer starts a server that reads each request in full, records it,
// then hands it to h.
func newPeer(t *testing.T, h nethttp.HandlerFunc) *peer {
	t.Helper()
	p := &peer{}
	p.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		p.hits.Add(1)
		p.mu.Lock()
		p.last, p.body = r, string(body)
		p.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// Handlers that fail on purpose.

func status(code int, header ...string) nethttp.HandlerFunc {
	return func(w nethttp.ResponseWriter, r *nethttp.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, `{"error":"on purpose"}`)
	}
}

// slow answers only after the client has gone.
func slow(w nethttp.ResponseWriter, r *nethttp.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// hangUp closes the connection after reading the request: the client sees
// EOF. With reset, it sends a TCP reset instead of a clean close.
func hangUp(reset bool) nethttp.HandlerFunc {
	return func(w nethttp.ResponseWriter, r *nethttp.Request) {
		conn, _, err := w.(nethttp.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if reset {
			conn.(*net.TCPConn).SetLinger(0)
		}
		conn.Close()
	}
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentAddr accepts connections and never says a word: a TLS handshake
// with it never completes, so nothing is ever sent.
func silentAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// connector returns an http connector with a short timeout and a client
// that ignores proxy settings from the environment.
func connector(t *testing.T, cfg keephttp.Config) *keephttp.Connector {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &nethttp.Client{Transport: &nethttp.Transport{}}
	}
	c, err := keephttp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func post(ctx context.Context, c *keephttp.Connector, params map[string]any) (any, error) {
	if params["method"] == nil {
		params["method"] = "POST"
	}
	return c.Do(ctx, connectors.Call{Method: "request", Params: params, IdempotencyKey: "mut-42"})
}

func get(ctx context.Context, c *keephttp.Connector, params map[string]any) (any, error) {
	return c.Do(ctx, connectors.Call{Method: "get", Params: params})
}
