package connectors_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"keep/connectors"
)

// resettingH2 is an HTTP/2 server over TLS that reads each request whole,
// counts it as done, and then resets its stream with PROTOCOL_ERROR: a
// server (or a proxy before it) that acted and then failed to answer.
// RFC 9113 §8.7 says only REFUSED_STREAM, or a GOAWAY below the stream,
// promises the request was not processed.
func resettingH2(t *testing.T) (addr string, tlsConf *tls.Config, done *atomic.Int32) {
	t.Helper()
	cert := httptest.NewTLSServer(http.NotFoundHandler())
	certs := cert.TLS.Certificates
	pool := cert.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	cert.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: certs, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := c.(*tls.Conn)
				if tc.Handshake() != nil {
					c.Close()
					return
				}
				if tc.ConnectionState().NegotiatedProtocol == "h2" {
					serveResetting(c, done)
					return
				}
				serveCutting(c, done)
			}()
		}
	}()
	return ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, done
}

// serveCutting is resettingH2's HTTP/1.1 side: it reads a request whole
// and closes the connection without an answer.
func serveCutting(c net.Conn, done *atomic.Int32) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	done.Add(1)
}

func serveResetting(c net.Conn, done *atomic.Int32) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				done.Add(1)
				fr.WriteRSTStream(f.StreamID, http2.ErrCodeProtocol)
			}
		case *http2.DataFrame:
			if n := len(f.Data()); n > 0 {
				fr.WriteWindowUpdate(0, uint32(n))
			}
			if f.StreamEnded() {
				done.Add(1)
				fr.WriteRSTStream(f.StreamID, http2.ErrCodeProtocol)
			}
		}
	}
}

// TestAMutationIsNeverResentOverHTTP2: net/http's HTTP/2 client sends a
// request again by itself when the server resets its stream with
// PROTOCOL_ERROR, body and all, up to seven times; the server may have
// acted on every copy. A mutation goes out once, and its outcome is
// uncertain.
func TestAMutationIsNeverResentOverHTTP2(t *testing.T) {
	addr, tlsConf, done := resettingH2(t)
	for _, body := range []string{`{"n":1}`, ""} {
		done.Store(0)
		tr := connectors.NewHTTPTransport()
		tr.TLSClientConfig = tlsConf
		client := &http.Client{Transport: tr}
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		var rd io.Reader
		if body != "" {
			rd = bytes.NewReader([]byte(body))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/items", rd)
		_, sent, err := (&connectors.Transport{Client: client}).Do(req)
		cancel()
		tr.CloseIdleConnections()
		if err == nil {
			t.Fatalf("body %q: no error from a reset stream", body)
		}
		if n := done.Load(); n != 1 {
			t.Errorf("body %q: the server received the POST %d times, want once", body, n)
		}
		if !sent {
			t.Errorf("body %q: sent = false after the server read the whole request", body)
		}
		if c := connectors.Classify(connectors.Exchange{Err: err, Sent: sent, Mutation: true}); c != connectors.Uncertain {
			t.Errorf("body %q: class %q, want uncertain (%v)", body, c, err)
		}
	}
}
