package http_test

import (
	"bufio"
	"context"
	"io"
	"net"
	nethttp "net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// rawPeer is a server below net/http's: it reads each request whole and
// then lets answer write whatever it likes on the connection, which
// net/http's server would not (headers without end, say).
func rawPeer(t *testing.T, answer func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := nethttp.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				answer(c)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// TestResponseHeadersAreBounded: net/http reads up to 10 MiB of response
// headers by default, and keep took that default. One GET answered with
// 9 MiB of short header lines allocated 224 MiB and put every one of
// them in the result, the ledger's and the trace's too. The shared
// transport (the connector's unless it is given a client) stops at 1 MiB;
// the failure says why, and is the server's: a read is transient, a
// mutation the server had in full is uncertain.
//
// Not parallel: it measures the process's allocations.
func TestResponseHeadersAreBounded(t *testing.T) {
	const headerBytes = 9 << 20 // under net/http's own limit
	// built before measuring: the server runs in this process
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")
	for len(answer) < headerBytes {
		answer = append(answer, "X-"+strconv.Itoa(len(answer))+": a\r\n"...)
	}
	answer = append(answer, "\r\nok"...)
	u := rawPeer(t, func(c net.Conn) { c.Write(answer) })
	c, err := keephttp.New(keephttp.Config{})
	if err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := get(context.Background(), c, map[string]any{"url": u})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatalf("a GET answered with %d bytes of headers came back as a result with %d headers", headerBytes, len(res.(map[string]any)["headers"].(map[string]any)))
	}
	if connectors.ClassOf(err) != connectors.Transient || !strings.Contains(err.Error(), "headers exceeded") {
		t.Errorf("GET: %v (class %q), want a transient failure naming the headers", err, connectors.ClassOf(err))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 { // 224 MiB before the bound, 13 after
		t.Errorf("reading the answer allocated %d MiB", alloc>>20)
	}

	_, err = post(context.Background(), c, map[string]any{"url": u, "json": 1.0})
	if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "headers exceeded") {
		t.Errorf("POST: %v (class %q), want an uncertain outcome naming the headers", err, connectors.ClassOf(err))
	}
}

// TestAnAnswerThatNeverEndsEndsWithTheCall: headers or a body that trickle
// in for ever, each line within any read deadline, are ended by the call's
// timeout. The POST reached the server whole, so when no status came its
// outcome is uncertain; a GET's is transient.
func TestAnAnswerThatNeverEndsEndsWithTheCall(t *testing.T) {
	t.Parallel()
	trickle := func(head string) func(c net.Conn) {
		return func(c net.Conn) {
			if _, err := io.WriteString(c, head); err != nil {
				return
			}
			for i := 0; ; i++ {
				if _, err := io.WriteString(c, "X-"+strconv.Itoa(i)+": a\r\n"); err != nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	u := rawPeer(t, trickle("HTTP/1.1 200 OK\r\n"))
	c := connector(t, keephttp.Config{Timeout: 300 * time.Millisecond})
	_, err := post(context.Background(), c, map[string]any{"url": u, "json": 1.0})
	if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("POST: %v (class %q), want an uncertain outcome at the deadline", err, connectors.ClassOf(err))
	}
	_, err = get(context.Background(), c, map[string]any{"url": u})
	if connectors.ClassOf(err) != connectors.Transient || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("GET: %v (class %q), want a transient failure at the deadline", err, connectors.ClassOf(err))
	}

	// a 500 whose body never ends: the status is the answer
	u = rawPeer(t, trickle("HTTP/1.1 500 Internal Server Error\r\n\r\n"))
	_, err = post(context.Background(), c, map[string]any{"url": u, "json": 1.0})
	if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "500") {
		t.Errorf("POST answered 500 with an endless body: %v (class %q), want uncertain", err, connectors.ClassOf(err))
	}
}

// TestRedirectTricksDoNotCarryTheHeldCredential: a server the account is
// bound to redirects a GET to a Location spelled to look like it: another
// case, a trailing dot, an IPv6 literal, the bound name as userinfo before
// another host. Every name resolves, for this test's client, to one local
// listener, which records the Authorization each Host got; keep's token
// reaches the bound host only.
func TestRedirectTricksDoNotCarryTheHeldCredential(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]string{}
	p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		seen[r.Host] = append(seen[r.Host], r.Header.Get("Authorization"))
		mu.Unlock()
		if to := r.URL.Query().Get("to"); to != "" {
			w.Header().Set("Location", to)
			w.WriteHeader(nethttp.StatusFound)
		}
	})
	addr := p.Listener.Addr().String()
	tr := &nethttp.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	c := connector(t, keephttp.Config{Client: &nethttp.Client{Transport: tr},
		Hosts: map[string]connectors.Account{"http://good.test": fixedAccount{name: "api", secret: "held-T0KEN"}}})
	for _, loc := range []string{
		"http://good.test@evil.test/", "http://good.test:80@evil.test/", "//evil.test/",
		"http://good.test.evil.test/", "http://good.test:81/", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
		"http://GOOD.TEST/", "http://good.test./",
	} {
		if _, err := get(context.Background(), c, map[string]any{"url": "http://good.test/r?to=" + url.QueryEscape(loc)}); err != nil {
			t.Fatalf("redirect to %s: %v", loc, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seen["good.test"]; len(got) == 0 || got[0] != "Bearer held-T0KEN" {
		t.Fatalf("the bound host got %q", got)
	}
	for host, auths := range seen {
		for _, a := range auths {
			if host != "good.test" && strings.Contains(a, "Bearer") {
				t.Errorf("%s got %q", host, a)
			}
		}
	}
	if len(seen) < 8 {
		t.Errorf("only %d hosts were reached: %v", len(seen), seen)
	}
}
