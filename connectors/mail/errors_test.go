package mail

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

// closedAddr is a loopback address nothing listens on: connection refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentAddr accepts connections (the kernel does, from the backlog) but
// never says a word: a greeting that never comes.
func silentAddr(t *testing.T) string {
	t.Helper()
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	return ln.Addr().String()
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()

	send := func(c *Connector) error {
		_, err := c.Do(context.Background(), sendCall("k", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"}))
		return err
	}
	search := func(c *Connector) error {
		_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
		return err
	}

	for _, tc := range []struct {
		name string
		mode failMode
		edit func(t *testing.T, cfg *Config)
		call func(*Connector) error
		want connectors.Class
		// sent says whether the SMTP server must have kept the message.
		sent bool
	}{
		{name: "A refused SMTP login is auth", mode: failAuth, call: send, want: connectors.Auth},
		{name: "A wrong SMTP password is auth", edit: func(_ *testing.T, cfg *Config) { cfg.Password = "nope" }, call: send, want: connectors.Auth},
		{name: "A server that requires a login we lack is auth", edit: func(_ *testing.T, cfg *Config) { cfg.Username, cfg.From = "", testUser }, call: send, want: connectors.Auth},
		{name: "No username at all is auth", edit: func(_ *testing.T, cfg *Config) { cfg.Username = "" }, call: search, want: connectors.Auth},
		{name: "A refused SMTP connection is transient", edit: func(t *testing.T, cfg *Config) { cfg.SMTP = closedAddr(t) }, call: send, want: connectors.Transient},
		{name: "An SMTP server that never greets is transient", edit: func(t *testing.T, cfg *Config) {
			cfg.SMTP = silentAddr(t)
			cfg.Timeout = 300 * time.Millisecond
		}, call: send, want: connectors.Transient},
		{name: "An unknown SMTP host is transient", edit: func(_ *testing.T, cfg *Config) {
			cfg.SMTP, cfg.TLS = "no-such-host.invalid:465", ""
			cfg.Timeout = 2 * time.Second
		}, call: send, want: connectors.Transient},
		{name: "A 451 to MAIL is transient", mode: failTempMail, call: send, want: connectors.Transient},
		{name: "A 550 to RCPT is logic", mode: failRcpt, call: send, want: connectors.Logic},
		{name: "A 451 after the body is transient", mode: failTempData, call: send, want: connectors.Transient},
		{name: "A 554 after the body is logic", mode: failRejectData, call: send, want: connectors.Logic},
		{name: "A drop after the body is uncertain", mode: failDropAfterData, call: send, want: connectors.Uncertain},
		{name: "No reply to the body in time is uncertain", mode: failHangAfterData, edit: func(_ *testing.T, cfg *Config) { cfg.Timeout = 300 * time.Millisecond }, call: send, want: connectors.Uncertain},
		{name: "A drop after the server accepted is uncertain", mode: failAcceptThenDrop, call: send, want: connectors.Uncertain, sent: true},
		{name: "A wrong IMAP password is auth", edit: func(_ *testing.T, cfg *Config) { cfg.Password = "nope" }, call: search, want: connectors.Auth},
		{name: "A refused IMAP connection is transient", edit: func(t *testing.T, cfg *Config) { cfg.IMAP = closedAddr(t) }, call: search, want: connectors.Transient},
		{name: "An IMAP server that never greets is transient", edit: func(t *testing.T, cfg *Config) {
			cfg.IMAP = silentAddr(t)
			cfg.Timeout = 300 * time.Millisecond
		}, call: search, want: connectors.Transient},
		{name: "A missing mailbox is logic", edit: func(_ *testing.T, cfg *Config) { cfg.Inbox = "Nope" }, call: search, want: connectors.Logic},
		{name: "An unknown method is logic", call: func(c *Connector) error {
			_, err := c.Do(context.Background(), connectors.Call{Method: "delete"})
			return err
		}, want: connectors.Logic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.smtp.setMode(tc.mode)
			c := b.connector(t, func(cfg *Config) {
				if tc.edit != nil {
					tc.edit(t, cfg)
				}
			})
			start := time.Now()
			err := tc.call(c)
			if got := connectors.ClassOf(err); got != tc.want {
				t.Fatalf("class %q, want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Fatalf("password in %v", err)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if n := len(b.smtp.accepted()); (n == 1) != tc.sent {
				t.Errorf("%d messages kept by the server", n)
			}
		})
	}
}

func TestClassifySMTP(t *testing.T) {
	t.Parallel()

	t.Run("A cancelled context before sending is transient", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Do(ctx, sendCall("k", map[string]any{"to": "a@example.org"}))
		if connectors.ClassOf(err) != connectors.Transient || len(b.smtp.accepted()) != 0 {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A network failure is uncertain only after the final dot", func(t *testing.T) {
		t.Parallel()
		if got := classifySMTP(stageFinal, errString("read: connection reset by peer")); got != connectors.Uncertain {
			t.Fatalf("final stage: %v", got)
		}
		if got := classifySMTP(stageBody, errString("write: broken pipe")); got != connectors.Transient {
			t.Fatalf("body stage: %v", got)
		}
	})
}
