package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// dial connects to addr within DialTimeout, TLS handshake included for
// implicit TLS. The connection returned enforces CommandTimeout: once a
// command is written, the server must answer within it.
func (c *Connector) dial(ctx context.Context, addr string, nextProto string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := net.Conn(&cmdConn{Conn: raw, timeout: c.cfg.CommandTimeout})
	// The greeting is the first reply we wait for.
	_ = raw.SetReadDeadline(time.Now().Add(c.cfg.DialTimeout + c.cfg.CommandTimeout))
	if c.cfg.tlsModeFor(addr) == TLSImplicit {
		tc := c.tlsConfig(addr)
		if tc.NextProtos == nil && nextProto != "" {
			tc.NextProtos = []string{nextProto}
		}
		tlsConn := tls.Client(conn, tc)
		if err := tlsConn.HandshakeContext(dctx); err != nil {
			raw.Close()
			return nil, err
		}
		conn = tlsConn
	}
	return conn, nil
}

// cmdConn bounds every wait for the server by a command timeout: a write
// (a command) or a read that made progress moves the read deadline to
// timeout from now. The client libraries' own deadlines (imapclient waits
// forever between responses) give way to it; within one call there is
// always a command outstanding, so a silent server is a dead one.
type cmdConn struct {
	net.Conn
	timeout time.Duration
}

func (c *cmdConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return n, err
}

func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	}
	return n, err
}

func (c *cmdConn) SetReadDeadline(time.Time) error { return nil }

func (c *cmdConn) SetDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(t) }

// budgetConn bounds what one command may read from the server: imapclient
// reads every envelope and literal whole into memory, whatever its size,
// so a bound must sit under it, on the connection. Unarmed it reads freely;
// armed, it reads at most the budget and then fails every read, which ends
// the command and the connection (nothing else can be read off it after an
// answer cut short).
//
// Under that, whatever the command, the whole session reads at most
// callMax bytes (when set): imapclient also reads into memory whatever a
// server adds to an answer unasked (a message's body in the answer to a
// fetch of its flags, a thousand bodies in the answer to a get of one),
// so no other bound holds there.
type budgetConn struct {
	net.Conn
	mu    sync.Mutex
	armed bool
	left  int64
	spent bool
	// callMax bounds the session, callRead counts toward it
	callMax, callRead int64
	over              bool
}

func (b *budgetConn) Read(p []byte) (int, error) {
	b.mu.Lock()
	armed, left := b.armed, b.left
	if armed && left <= 0 {
		b.spent = true
	}
	callLeft := b.callMax - b.callRead
	if b.callMax > 0 && callLeft <= 0 {
		b.over = true
	}
	b.mu.Unlock()
	if b.callMax > 0 {
		if callLeft <= 0 {
			return 0, &overReadError{max: b.callMax}
		}
		if int64(len(p)) > callLeft {
			p = p[:callLeft]
		}
	}
	if armed {
		if left <= 0 {
			return 0, errBudgetSpent
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := b.Conn.Read(p)
	b.mu.Lock()
	if b.armed {
		b.left -= int64(n)
	}
	b.callRead += int64(n)
	b.mu.Unlock()
	return n, err
}

// overRead is the session's refusal to read on, if it refused.
func (b *budgetConn) overRead() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return &overReadError{max: b.callMax}
	}
	return nil
}

// overReadError is a server that sent more than one call reads: its
// fault, and the same call would meet it again.
type overReadError struct{ max int64 }

func (e *overReadError) Error() string {
	return fmt.Sprintf("the server sent more than the %d bytes keep reads in one call", e.max)
}

// arm allows max more bytes to be read, until disarm.
func (b *budgetConn) arm(max int64) {
	b.mu.Lock()
	b.armed, b.left, b.spent = true, max, false
	b.mu.Unlock()
}

// disarm lifts the bound and says whether it was reached.
func (b *budgetConn) disarm() (spent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	return b.spent
}

var errBudgetSpent = errors.New("mail: the byte budget of the command is spent")

// maxSMTPReply bounds one SMTP reply. go-smtp bounds a reply's lines
// (2000 bytes) but not their number, and reads a multi-line reply whole
// into memory; the longest a real server sends is an EHLO's list of
// extensions or an explanation of a refusal, a few kilobytes.
const maxSMTPReply = 1 << 20

// replyBound is the connection go-smtp reads through: what the server
// sends after each command, its reply, is read to maxSMTPReply, and then
// every read fails. cmdConn's deadline does not end such a reply: every
// read of it makes progress.
type replyBound struct {
	net.Conn
	mu   sync.Mutex
	left int64
}

func newReplyBound(conn net.Conn) *replyBound {
	return &replyBound{Conn: conn, left: maxSMTPReply}
}

func (b *replyBound) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.left = maxSMTPReply
	b.mu.Unlock()
	return b.Conn.Write(p)
}

func (b *replyBound) Read(p []byte) (int, error) {
	b.mu.Lock()
	left := b.left
	b.mu.Unlock()
	if left <= 0 {
		return 0, errLongReply
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.Conn.Read(p)
	b.mu.Lock()
	b.left -= int64(n)
	b.mu.Unlock()
	return n, err
}

// errLongReply is a server whose reply ran on: its fault, and the same
// call would meet it again.
var errLongReply = fmt.Errorf("the server's reply ran past the %d bytes keep reads of one", maxSMTPReply)
