package mail

import (
	"bytes"
	"context"
	netmail "net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"

	"keep/connectors"
)

// maxBody bounds a message body: this connector sends text, not files.
const maxBody = 10 << 20

// send implements the send mutation: validate everything locally (a failure
// here is definite and nothing leaves the machine), then one SMTP
// transaction, then optionally a copy to the Sent folder.
func (c *Connector) send(ctx context.Context, call connectors.Call) (any, error) {
	m, rcpts, err := c.prepareSend(call)
	if err != nil {
		return nil, err
	}
	raw, err := m.build()
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "send: build the message: %v", err)
	}
	// The copy to the account's own address travels in the same
	// transaction as everyone else's: if it arrives, they were accepted.
	if self := c.selfAddress(); self != "" && !containsFold(rcpts, self) {
		rcpts = append(rcpts, self)
	}
	if err := c.submit(ctx, rcpts, raw); err != nil {
		return nil, err
	}
	result := map[string]any{"messageId": m.messageID}
	if !c.cfg.ServerFilesSent {
		// The message is sent: a failed copy must not turn a success into
		// a failure (the host would send it again). Report it instead.
		if err := c.appendSent(ctx, raw, m.date); err != nil {
			result["sentCopyError"] = err.Error()
		}
	}
	return result, nil
}

// prepareSend checks the parameters and builds the outgoing message.
func (c *Connector) prepareSend(call connectors.Call) (outgoing, []string, error) {
	p := call.Params
	if call.IdempotencyKey == "" {
		// The host always derives one for a mutation; without it the
		// Message-ID would not be stable and reconciliation impossible.
		return outgoing{}, nil, connectors.Errorf(connectors.Internal, "send: no idempotency key from the host")
	}
	r, err := parseRecipients(p)
	if err != nil {
		return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: %v", err)
	}
	if len(r.to) == 0 {
		return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: to is required (an address or an array of addresses)")
	}
	m := outgoing{from: c.cfg.From, fromName: c.cfg.FromName, to: r.toNamed, cc: r.ccNamed, messageID: c.messageIDFor(call.IdempotencyKey), date: time.Now()}
	if m.from == "" {
		return outgoing{}, nil, c.failf(connectors.Auth, "send: no from address or username configured")
	}
	for _, k := range []string{"subject", "body", "inReplyTo"} {
		v, err := stringParam(p, k)
		if err != nil {
			return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: %v", err)
		}
		switch k {
		case "subject":
			if strings.ContainsAny(v, "\r\n") {
				return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: subject must be one line")
			}
			m.subject = v
		case "body":
			m.body = v
		case "inReplyTo":
			m.inReplyTo = bracketID(v)
		}
	}
	if !utf8.ValidString(m.body) || len(m.body) > maxBody {
		return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: body must be UTF-8 text of at most %d bytes", maxBody)
	}
	if m.inReplyTo != "" {
		// a message id is printable ASCII without spaces (RFC 5322 msg-id):
		// a control character would reach the header, and the terminals
		// of those who read it, as given
		if strings.IndexFunc(m.inReplyTo, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
			return outgoing{}, nil, connectors.Errorf(connectors.Logic, "send: inReplyTo %q is not a message id", m.inReplyTo)
		}
		// Without the parent's own References, the parent is the thread.
		m.references = []string{m.inReplyTo}
	}
	return m, r.all(), nil
}

// submit runs one SMTP transaction. Each step records its stage, and the
// stage of a failure decides its class: see classifySMTP.
func (c *Connector) submit(ctx context.Context, rcpts []string, raw []byte) error {
	cl, err := c.smtpSession(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	stage := stageEnvelope
	fail := func(what string, err error) error {
		e := c.fail(ctx, classifySMTP(stage, err), "smtp: "+what, err)
		// no connection: the message certainly never reached the server
		e.NotSent = stage == stageConnect && e.Class == connectors.Transient
		return e
	}

	from := smtpPath(c.cfg.From)
	if err := cl.Mail(from, nil); err != nil {
		return fail("MAIL FROM "+from, err)
	}
	for _, r := range rcpts {
		path := smtpPath(r)
		if err := cl.Rcpt(path, nil); err != nil {
			return fail("RCPT TO "+path, err)
		}
	}
	w, err := cl.Data()
	if err != nil {
		return fail("DATA", err)
	}

	stage = stageBody
	if _, err := w.Write(raw); err != nil {
		return fail("write the message", err)
	}
	stage = stageFinal
	if err := w.Close(); err != nil {
		if classifySMTP(stage, err) == connectors.Uncertain {
			return fail("no reply to the end of the message (the server may have accepted it)", err)
		}
		return fail("end of message", err)
	}
	// Accepted. QUIT is a courtesy; its failure changes nothing.
	_ = cl.Quit()
	return nil
}

// smtpPath renders a bare address (as net/mail parses it, quotes removed)
// the way an SMTP envelope needs it (RFC 5321 §4.1.2): a local part that is
// not a dot-string goes back in quotes. go-smtp writes the address between
// "<" and ">" as given, so an unquoted "ann@example.org> ORCPT=…"@x.invalid
// would end the path early: the server would take ann@example.org as the
// recipient and the rest as a parameter, outside the domains the send was
// allowed for and shown with.
func smtpPath(addr string) string {
	return strings.TrimSuffix(strings.TrimPrefix((&netmail.Address{Address: addr}).String(), "<"), ">")
}

// smtpSession is a logged-in SMTP client. A refused token may just have
// expired: it is refreshed once, on a new connection (servers hang up on a
// client that fumbled AUTH).
func (c *Connector) smtpSession(ctx context.Context) (*smtp.Client, error) {
	cr, err := c.credentials(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := c.smtpLogin(ctx, cr)
	if err != nil && cr.bearer && connectors.ClassOf(err) == connectors.Auth {
		c.invalidate()
		if cr, err = c.credentials(ctx); err != nil {
			return nil, err
		}
		cl, err = c.smtpLogin(ctx, cr)
	}
	return cl, err
}

// smtpLogin connects, greets and logs in. go-smtp has no context support:
// closing the connection when ctx ends makes the pending step fail, and its
// stage classifies it.
func (c *Connector) smtpLogin(ctx context.Context, cr creds) (*smtp.Client, error) {
	addr := c.cfg.SMTP
	stage := stageConnect
	fail := func(what string, err error) error {
		return c.fail(ctx, classifySMTP(stage, err), "smtp: "+what, err)
	}
	conn, err := c.dial(ctx, addr, "")
	if err != nil {
		return nil, fail("connect to "+addr, err)
	}
	context.AfterFunc(ctx, func() { conn.Close() })
	conn = newReplyBound(conn)

	var cl *smtp.Client
	if c.cfg.tlsModeFor(addr) == TLSStartTLS {
		cl, err = smtp.NewClientStartTLS(conn, c.tlsConfig(addr))
		if err != nil {
			conn.Close()
			return nil, fail("starttls with "+addr, err)
		}
	} else {
		cl = smtp.NewClient(conn)
	}
	cl.CommandTimeout = c.cfg.CommandTimeout
	cl.SubmissionTimeout = c.cfg.CommandTimeout
	// Greet explicitly (STARTTLS already has), so a refusal at the door is
	// classified as a connect failure, not as whatever step came next.
	if c.cfg.tlsModeFor(addr) != TLSStartTLS {
		if err := cl.Hello("localhost"); err != nil {
			cl.Close()
			return nil, fail("hello to "+addr, err)
		}
	}
	stage = stageAuth
	ok, offered := cl.Extension("AUTH")
	if !ok {
		cl.Close()
		return nil, c.failf(connectors.Auth, "smtp: %s does not offer AUTH; cannot log in as %s", addr, cr.user)
	}
	mech, err := c.mechanism(cr, strings.Fields(strings.ToUpper(offered)))
	if err != nil {
		cl.Close()
		return nil, err
	}
	if err := cl.Auth(saslClient(mech, cr, addr)); err != nil {
		cl.Close()
		return nil, c.refusal(cr, err, c.fail(ctx, classifySMTP(stage, err), "smtp: login as "+cr.user, err))
	}
	return cl, nil
}

// selfAddress is where a send routes its confirming copy: the login name
// when it is an address (the account's own mailbox), else From. Empty when
// the copy is off.
func (c *Connector) selfAddress() string {
	if c.cfg.NoSelfCopy {
		return ""
	}
	if l := c.cfg.login(); isAddress(l) {
		return l
	}
	return c.cfg.From
}

// appendSent files a copy of a sent message in the Sent folder, marked seen.
func (c *Connector) appendSent(ctx context.Context, raw []byte, date time.Time) error {
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	sent, err := s.sentFolder(ctx)
	if err != nil {
		return err
	}
	cmd := s.cl.Append(sent, int64(len(raw)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: date})
	if _, err := bytes.NewReader(raw).WriteTo(cmd); err != nil {
		_ = cmd.Close()
		return c.fail(ctx, classifyIMAP(err), "imap: append to "+sent, err)
	}
	if err := cmd.Close(); err != nil {
		return c.fail(ctx, classifyIMAP(err), "imap: append to "+sent, err)
	}
	if _, err := cmd.Wait(); err != nil {
		return c.fail(ctx, classifyIMAP(err), "imap: append to "+sent, err)
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
