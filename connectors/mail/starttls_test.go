package mail

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
)

// The tests here play a server (or a man in the middle) that writes a
// response in clear right after its STARTTLS answer, before the TLS
// handshake: what a client then reads must not pass for something said
// over TLS (CVE-2011-0411's kind, on the client's side).

// injected is what the tests write after the STARTTLS answer. Were it
// taken as the server's, IMAP clients would see a capability list without
// the login methods the real one offers, and SMTP a reply that does not
// fit the command after.
const (
	injectedIMAP = "* CAPABILITY IMAP4rev1 INJECTED\r\n"
	injectedSMTP = "250 INJECTED\r\n"
)

// heard records what a test server received, after TLS.
type heard struct {
	mu    sync.Mutex
	lines []string
}

func (h *heard) add(s string) {
	h.mu.Lock()
	h.lines = append(h.lines, s)
	h.mu.Unlock()
}

func (h *heard) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// imapInjector answers STARTTLS with OK and injectedIMAP in one write,
// then completes the handshake and serves a Gmail-like session over TLS
// (gimap's), whose lines it records.
func imapInjector(t *testing.T, serverTLS *tls.Config, g *gimap, h *heard) string {
	t.Helper()
	return serveEach(t, func(c net.Conn) {
		defer c.Close()
		fmt.Fprintf(c, "* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] ready\r\n")
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		tag, cmd, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.EqualFold(cmd, "STARTTLS") {
			fmt.Fprintf(c, "%s BAD STARTTLS first\r\n", tag)
			return
		}
		// one write: the client's first read after the OK holds both
		if _, err := c.Write([]byte(tag + " OK Begin TLS\r\n" + injectedIMAP)); err != nil {
			return
		}
		tc := tls.Server(c, serverTLS)
		if err := tc.Handshake(); err != nil {
			return
		}
		h.add("TLS")
		g.session(&recording{Conn: tc, h: h}, "IMAP4rev1 AUTH=PLAIN X-GM-EXT-1")
	})
}

// recording is a connection whose reads are recorded in h.
type recording struct {
	net.Conn
	h *heard
}

func (r *recording) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if n > 0 {
		r.h.add(string(p[:n]))
	}
	return n, err
}

// TestTheLabelClientRefusesDataInjectedBeforeTLS: keep negotiates
// STARTTLS itself for go-imap v1 (the label method's client); data that
// came with the server's OK, in clear, ends the session before TLS, and
// nothing, credentials least of all, is sent.
func TestTheLabelClientRefusesDataInjectedBeforeTLS(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}}
	h := &heard{}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) {
		cfg.TLS = TLSStartTLS
		cfg.TLSConfig = clientTLS
		cfg.IMAP = imapInjector(t, serverTLS, g, h)
	})
	call := connectors.Call{Method: "label", Params: map[string]any{"id": "INBOX:7:5", "add": "x"}, IdempotencyKey: "label-1"}
	_, err := c.Do(context.Background(), call)
	if err == nil || !strings.Contains(err.Error(), "sent data after its STARTTLS answer") {
		t.Fatalf("err = %v, want the injection refused", err)
	}
	if got := h.text(); got != "" {
		t.Errorf("the server heard, over TLS: %q", got)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.labels["x"] {
		t.Errorf("the label was stored")
	}
}

// TestTheIMAPClientDoesNotReadDataInjectedBeforeTLS: go-imap v2 hands
// what it read past its STARTTLS answer to the TLS client as the start
// of the TLS stream, where clear text is no record: the handshake fails,
// and no credentials are sent. Were it read as a response instead, the
// injected capability list (no AUTH=PLAIN, LOGIN disabled) would be
// taken as the server's.
func TestTheIMAPClientDoesNotReadDataInjectedBeforeTLS(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	g := &gimap{gmail: true, labels: map[string]bool{}}
	h := &heard{}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) {
		cfg.TLS = TLSStartTLS
		cfg.TLSConfig = clientTLS
		cfg.IMAP = imapInjector(t, serverTLS, g, h)
	})
	_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
	if err == nil {
		t.Fatal("the search succeeded over a session with injected data")
	}
	if got := h.text(); strings.Contains(got, "TLS") || strings.Contains(got, "AUTHENTICATE") || strings.Contains(got, "LOGIN") {
		t.Errorf("the session went on past the injection: the server heard %q", got)
	}
}

// TestTheSMTPClientDoesNotReadDataInjectedBeforeTLS: go-smtp starts TLS
// on the bare connection and drops what its reader held, so what came in
// clear with the 220 is never read: the send goes through over TLS as if
// nothing had been injected. Were the injected "250" read as the answer
// to EHLO over TLS, the AUTH the server offers would go unseen and every
// reply after would answer the command before.
func TestTheSMTPClientDoesNotReadDataInjectedBeforeTLS(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	s := &rawSMTP{tls: serverTLS, inject: injectedSMTP}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) {
		cfg.TLS = TLSStartTLS
		cfg.TLSConfig = clientTLS
		cfg.SMTP = s.serve(t)
	})
	if _, err := c.Do(context.Background(), sendCall("inj-1", map[string]any{"to": "ann@example.org"})); err != nil {
		t.Fatal(err)
	}
	if n := s.delivered(); n != 1 {
		t.Fatalf("%d messages delivered", n)
	}
}
