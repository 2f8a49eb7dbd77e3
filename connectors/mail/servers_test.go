package mail

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"keep/connectors"
)

// The peers these tests run against: a real IMAP server (go-imap's in-memory
// backend) and a real SMTP server (go-smtp) on loopback, the SMTP side
// filing each accepted message in the IMAP Sent folder as Gmail does.

const (
	testUser     = "me@example.com"
	testPassword = "hunter2-s3cret-pw"
	testSent     = "[Gmail]/Sent Mail"
)

// failMode makes the SMTP server fail on purpose.
type failMode int

const (
	failNone           failMode = iota
	failAuth                    // 535 to AUTH whatever the password
	failTempMail                // 451 to MAIL FROM
	failRcpt                    // 550 to RCPT TO
	failTempData                // 451 after the body
	failRejectData              // 554 after the body
	failDropAfterData           // read the body, never reply, hang up
	failAcceptThenDrop          // accept and file the message, then hang up without replying
	failHangAfterData           // read the body and never answer (until the test ends)
)

// received is one message the SMTP server accepted.
type received struct {
	from string
	to   []string
	data []byte
}

// smtpBackend is the go-smtp Backend: it checks PLAIN credentials, records
// accepted messages, and files them in the IMAP user's Sent folder.
type smtpBackend struct {
	imapUser *imapmemserver.User
	done     chan struct{} // closed when the test ends

	mu       sync.Mutex
	mode     failMode
	messages []received
}

func (b *smtpBackend) setMode(m failMode) {
	b.mu.Lock()
	b.mode = m
	b.mu.Unlock()
}

func (b *smtpBackend) getMode() failMode {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mode
}

func (b *smtpBackend) accepted() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.messages...)
}

func (b *smtpBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &smtpSession{b: b, conn: c}, nil
}

type smtpSession struct {
	b      *smtpBackend
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if s.b.getMode() == failAuth || username != testUser || password != testPassword {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	if s.b.getMode() == failTempMail {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.b.getMode() == failRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user " + to}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	switch s.b.getMode() {
	case failTempData:
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Queue full"}
	case failRejectData:
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Content rejected"}
	case failDropAfterData:
		s.conn.Conn().Close()
		return errors.New("dropped")
	case failHangAfterData:
		<-s.b.done
		return errors.New("too late")
	}
	s.b.mu.Lock()
	s.b.messages = append(s.b.messages, received{from: s.from, to: s.to, data: data})
	s.b.mu.Unlock()
	// Play Gmail: every message sent through SMTP shows up in Sent.
	if _, err := s.b.imapUser.Append(testSent, bytes.NewReader(data), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}}); err != nil {
		return err
	}
	if s.b.getMode() == failAcceptThenDrop {
		s.conn.Conn().Close()
		return errors.New("dropped after accepting")
	}
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

// quietLogger drops the servers' complaints about the connections the tests
// break on purpose.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}

// bundle is what setup gives a test: the servers, their state, and a config
// pointing at them.
type bundle struct {
	cfg      Config
	imapUser *imapmemserver.User
	smtp     *smtpBackend
	imapMem  *imapmemserver.Server
	imapSrv  *imapserver.Server
	smtpSrv  *smtp.Server
}

// setup starts an IMAP and an SMTP server on loopback for one test.
func setup(t *testing.T) *bundle {
	t.Helper()
	user := imapmemserver.NewUser(testUser, testPassword)
	for _, mbox := range []string{"INBOX", testSent} {
		if err := user.Create(mbox, nil); err != nil {
			t.Fatal(err)
		}
	}
	mem := imapmemserver.New()
	mem.AddUser(user)
	imapSrv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		// IMAP4rev1 only, as Gmail: plain SEARCH responses, not ESEARCH.
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       quietLogger{},
	})
	imapLn := listen(t)
	go func() { _ = imapSrv.Serve(imapLn) }()
	t.Cleanup(func() { _ = imapSrv.Close() })

	be := &smtpBackend{imapUser: user, done: make(chan struct{})}
	smtpSrv := smtp.NewServer(be)
	smtpSrv.Domain = "localhost"
	smtpSrv.AllowInsecureAuth = true
	smtpSrv.ErrorLog = quietLogger{}
	smtpLn := listen(t)
	go func() { _ = smtpSrv.Serve(smtpLn) }()
	t.Cleanup(func() { _ = smtpSrv.Close() })
	// Runs before the Close above: a session stuck in Data lets go first.
	t.Cleanup(func() { close(be.done) })

	return &bundle{
		cfg: Config{
			IMAP:       imapLn.Addr().String(),
			SMTP:       smtpLn.Addr().String(),
			Username:   testUser,
			Password:   testPassword,
			SentFolder: testSent,
			TLS:        TLSNone,
			Timeout:    5 * time.Second,
			// The SMTP server plays Gmail: it files what it accepts in
			// Sent, and routes no copy back.
			ServerFilesSent: true,
			NoSelfCopy:      true,
			// as the host's: every connector of a bundle, a restarted
			// one too, derives the same ids
			MessageIDSecret: testIDSecret,
		},
		imapUser: user,
		smtp:     be,
		imapMem:  mem,
		imapSrv:  imapSrv,
		smtpSrv:  smtpSrv,
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveEach accepts connections on a loopback port until the test ends,
// each handed to handle on a goroutine of its own, and returns the port's
// address.
func serveEach(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// connector builds a connector from b's config, changed by edit.
func (b *bundle) connector(t *testing.T, edit func(*Config)) *Connector {
	t.Helper()
	return newConnector(t, b.cfg, edit)
}

// newConnector builds a connector from cfg, changed by edit.
func newConnector(t *testing.T, cfg Config, edit func(*Config)) *Connector {
	t.Helper()
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seed appends a message to mailbox and returns nothing: UIDs are assigned
// in order, 1, 2, 3… in a fresh mailbox.
func (b *bundle) seed(t *testing.T, mailbox, from, subject, body string) {
	t.Helper()
	raw := "From: " + from + "\r\n" +
		"To: " + testUser + "\r\n" +
		"Subject: " + subject + "\r\n" +
		"Date: Mon, 02 Jan 2006 15:04:05 +0000\r\n" +
		"Message-ID: <" + strings.ReplaceAll(strings.ToLower(subject), " ", "-") + "@example.org>\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"\r\n" + strings.ReplaceAll(body, "\n", "\r\n")
	b.appendRaw(t, mailbox, raw)
}

func (b *bundle) appendRaw(t *testing.T, mailbox, raw string) {
	t.Helper()
	if _, err := b.imapUser.Append(mailbox, strings.NewReader(raw), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// fakeAccount is a connectors.Account at the machine's edge: the host's
// accounts are tested where they live.
type fakeAccount struct {
	name, kind, user string
	mu               sync.Mutex
	tokens           []string // handed out in turn; the last one repeats
	invalidated      int
	err              error
}

var _ connectors.Account = (*fakeAccount)(nil)

func (a *fakeAccount) Name() string {
	if a.name == "" {
		return "test"
	}
	return a.name
}

func (a *fakeAccount) Kind() string {
	if a.kind == "" {
		return "oauth2"
	}
	return a.kind
}

func (a *fakeAccount) Username() string { return a.user }

func (a *fakeAccount) Secret(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return "", a.err
	}
	if len(a.tokens) == 0 {
		return "", nil
	}
	t := a.tokens[0]
	if len(a.tokens) > 1 && a.invalidated > 0 {
		a.tokens = a.tokens[1:]
		a.invalidated = 0
		t = a.tokens[0]
	}
	return t, nil
}

func (a *fakeAccount) Invalidate() {
	a.mu.Lock()
	a.invalidated++
	a.mu.Unlock()
}

// testIDSecret is the host's Message-ID secret in tests.
const testIDSecret = "test Message-ID secret"
