package http_test

import (
	"bufio"
	"context"
	"io"
	"net"
	nethttp "net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

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
