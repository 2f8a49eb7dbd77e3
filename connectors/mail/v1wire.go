package mail

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	clientv1 "github.com/emersion/go-imap/client"
)

// go-imap v1 (the label method's client) trusts what the server sends: it
// parses a parenthesised list by recursing once per level, with no bound,
// so a response of a few megabytes of "(" overflows the goroutine stack,
// a fatal error no recover can catch, and the daemon dies; and it
// allocates a literal's declared size (up to 4 GiB) before reading a byte
// of it. Its Reader's own limit is out of reach behind the client. So the
// connection under it reads the stream as IMAP tokens do, and ends the
// connection at a response nested deeper, or longer, than any answer to
// the commands labels sends can be.
const (
	// maxV1Depth: X-GM-LABELS nests two levels; go-imap v2 stops at 1000.
	maxV1Depth = 100
	// maxV1Response bounds one response, literals included: a message's
	// labels, a mailbox's flags, a capability list.
	maxV1Response = 1 << 20
)

// v1Guard is the connection go-imap v1 reads through (see above). It
// watches the bytes the server sends and fails the read that would hand
// the client a response over the bounds, before the client parses it.
type v1Guard struct {
	net.Conn
	state   v1State
	depth   int    // list nesting of the current response
	size    int64  // bytes of the current response so far
	literal int64  // a literal's declared size, then what is left of it
	head    []byte // the current response's first bytes (see checkHead)
	err     *errV1Response
	// refused is err for the goroutines that see only the client's
	// "connection closed"
	refused atomic.Pointer[errV1Response]
}

type v1State int

const (
	v1Text    v1State = iota // between tokens, or in an atom
	v1Quoted                 // inside "…"
	v1Escaped                // after a backslash inside "…"
	v1LitSize                // inside {…}, reading the size
	v1LitCR                  // after {n}, expecting CR LF
	v1LitLF                  // after {n} CR, expecting LF
	v1Literal                // inside a literal's bytes
)

// errV1Response is the guard's refusal: the server's fault (Logic when
// classified, see classifyIMAP).
type errV1Response struct{ what string }

func (e *errV1Response) Error() string {
	return "the server sent a response keep does not read: " + e.what
}

func (g *v1Guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.Conn.Read(p)
	if e := g.scan(p[:n]); e != nil {
		g.err = e
		g.refused.Store(e)
		// nothing more can be read off a connection left mid-response
		g.Conn.Close()
		return 0, e
	}
	return n, err
}

// scan follows the tokens of b: only lists, quoted strings and literals
// matter, because those are where a "(" is or is not a list's start.
func (g *v1Guard) scan(b []byte) *errV1Response {
	for i := 0; i < len(b); i++ {
		if g.state == v1Literal {
			skip := min(int64(len(b)-i), g.literal)
			g.literal -= skip
			g.size += skip
			i += int(skip) - 1
			if g.literal == 0 {
				g.state = v1Text
			}
			continue
		}
		ch := b[i]
		g.size++
		if len(g.head) < maxV1Head {
			g.head = append(g.head, ch)
		}
		if g.size > maxV1Response {
			return &errV1Response{fmt.Sprintf("a response over %d bytes", maxV1Response)}
		}
		switch g.state {
		case v1Quoted:
			switch ch {
			case '\\':
				g.state = v1Escaped
			case '"':
				g.state = v1Text
			case '\n':
				if e := g.endResponse(); e != nil {
					return e
				}
			}
			continue
		case v1Escaped:
			g.state = v1Quoted
			continue
		case v1LitSize:
			switch {
			case ch >= '0' && ch <= '9':
				g.literal = g.literal*10 + int64(ch-'0')
				if g.size+g.literal > maxV1Response {
					return &errV1Response{fmt.Sprintf("a literal of more than %d bytes", maxV1Response-g.size)}
				}
				continue
			case ch == '+':
				continue
			case ch == '}':
				g.state = v1LitCR
				continue
			}
			g.state = v1Text // not a literal after all: read ch as text
		case v1LitCR, v1LitLF:
			switch {
			case ch == '\r' && g.state == v1LitCR:
				g.state = v1LitLF
				continue
			case ch == '\n':
				g.state = v1Literal
				if g.literal == 0 {
					g.state = v1Text
				}
				continue
			}
			g.state = v1Text
		}
		switch ch {
		case '"':
			g.state = v1Quoted
		case '{':
			g.state, g.literal = v1LitSize, 0
		case '(':
			g.depth++
			if g.depth > maxV1Depth {
				return &errV1Response{fmt.Sprintf("lists nested more than %d deep", maxV1Depth)}
			}
		case ')':
			if g.depth > 0 {
				g.depth--
			}
		case '\n':
			if e := g.endResponse(); e != nil {
				return e
			}
		}
	}
	return nil
}

// cause is the guard's refusal when there was one: the client reports it
// only as its connection closing, which would read as the network's fault.
func (g *v1Guard) cause(err error) error {
	if e := g.refused.Load(); e != nil && err != nil {
		return e
	}
	return err
}

func (g *v1Guard) endResponse() *errV1Response {
	e := checkHead(g.head, g.size <= maxV1Head)
	g.state, g.depth, g.size, g.head = v1Text, 0, 0, g.head[:0]
	return e
}

// maxV1Head is as much of a response as checkHead needs.
const maxV1Head = 64

// checkHead refuses the responses that crash go-imap v1: it takes the
// fields after the name of an EXISTS, RECENT, EXPUNGE or FETCH to be
// there, and indexes them in its reader goroutine, where a panic ends the
// process. In IMAP those names come after a number, and FETCH before its
// list; "* EXPUNGE" or "* 1 FETCH" alone is no response a server sends.
// whole is whether head holds all of the response.
func checkHead(head []byte, whole bool) *errV1Response {
	f := strings.Fields(string(head))
	if len(f) < 2 || f[0] != "*" {
		return nil
	}
	switch strings.ToUpper(f[1]) {
	case "EXISTS", "RECENT", "EXPUNGE", "FETCH":
		return &errV1Response{fmt.Sprintf("%s without a message number", strings.ToUpper(f[1]))}
	}
	if whole && len(f) == 3 && strings.EqualFold(f[2], "FETCH") {
		return &errV1Response{"FETCH without its data"}
	}
	return nil
}

// readGreetingV1 reads the server's greeting off r: it must be OK.
func readGreetingV1(r *bufio.Reader) error {
	greeting, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(strings.ToUpper(greeting), "* OK") {
		return fmt.Errorf("the server greeted with %q, not OK", strings.TrimSpace(greeting))
	}
	return nil
}

// greetV1 reads the greeting on a connection that needs no STARTTLS, and
// returns what came after it.
func greetV1(conn net.Conn) ([]byte, error) {
	r := bufio.NewReader(&v1Guard{Conn: conn})
	if err := readGreetingV1(r); err != nil {
		return nil, err
	}
	rest, _ := r.Peek(r.Buffered())
	return rest, nil
}

// startTLSv1 negotiates STARTTLS on conn before go-imap v1 sees it, and
// returns the TLS connection, its greeting consumed. v1's own StartTLS
// puts TLS between the guard and the client, where the guard would read
// ciphertext: the guard belongs above TLS, so TLS must come first.
func startTLSv1(ctx context.Context, conn net.Conn, cfg *tls.Config) (net.Conn, error) {
	r := bufio.NewReader(&v1Guard{Conn: conn})
	if err := readGreetingV1(r); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(conn, "K1 STARTTLS\r\n"); err != nil {
		return nil, err
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		status, ok := strings.CutPrefix(line, "K1 ")
		if !ok {
			continue // an untagged response: nothing to act on before TLS
		}
		if !strings.HasPrefix(strings.ToUpper(status), "OK") {
			return nil, fmt.Errorf("STARTTLS refused: %s", strings.TrimSpace(status))
		}
		break
	}
	// Anything sent after the OK and before the handshake came in clear
	// and would be read as if it came over TLS (CVE-2011-0411's kind).
	if r.Buffered() > 0 {
		return nil, errors.New("the server sent data after its STARTTLS answer, before TLS")
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// v1Start is the connection go-imap v1 is made with. clientv1.New reads
// the greeting and starts the goroutine that reads everything after, and
// that goroutine prints what it cannot parse to os.Stderr through the
// client's ErrorLog: the daemon's terminal, for a server to write on.
// ErrorLog can only be set once New has returned, when that goroutine
// may already be reading it. So New gets a greeting keep has read and
// checked, and the connection gives nothing more until open: ErrorLog is
// set before the goroutine can have anything to log.
type v1Start struct {
	net.Conn
	greeting *strings.Reader
	rest     *bytes.Reader // what came after the greeting
	gate     chan struct{}
	opened   sync.Once
}

func newV1Start(conn net.Conn, rest []byte) *v1Start {
	return &v1Start{
		Conn: conn,
		// with capabilities, or New would ask for them past the gate
		greeting: strings.NewReader("* OK [CAPABILITY IMAP4rev1] keep read the greeting\r\n"),
		rest:     bytes.NewReader(rest),
		gate:     make(chan struct{}),
	}
}

func (s *v1Start) open() { s.opened.Do(func() { close(s.gate) }) }

func (s *v1Start) Read(p []byte) (int, error) {
	if s.greeting.Len() > 0 {
		return s.greeting.Read(p)
	}
	<-s.gate
	if s.rest.Len() > 0 {
		return s.rest.Read(p)
	}
	return s.Conn.Read(p)
}

// newClientV1 makes a go-imap v1 client on conn, whose greeting was read
// (rest is what came after it), with its error log silenced: every error
// it would print also reaches the command that met it.
func newClientV1(conn net.Conn, rest []byte) (*clientv1.Client, *v1Guard, error) {
	start := newV1Start(conn, rest)
	defer start.open()
	guard := &v1Guard{Conn: start}
	cl, err := clientv1.New(guard)
	if err != nil {
		return nil, guard, err
	}
	cl.ErrorLog = log.New(io.Discard, "", 0)
	return cl, guard, nil
}
