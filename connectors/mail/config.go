// Package mail is the mail connector: it reads a mailbox over IMAP (search by
// UID cursor, get by id) and sends over SMTP with a Message-ID the host
// chooses, so that a send whose outcome is unknown can be reconciled by
// looking for that Message-ID in the Sent folder (DESIGN.md §6, §7.3).
//
// The same connector serves the "gmail" preset: Gmail speaks plain IMAP and
// SMTP, and only its defaults differ.
package mail

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// TLS modes for Config.TLS.
const (
	TLSImplicit = "implicit" // TLS from the first byte (IMAPS 993, SMTPS 465)
	TLSStartTLS = "starttls" // plain connect, then STARTTLS (587, 143)
	TLSNone     = "none"     // no TLS at all; only allowed on loopback
)

// Config configures a mail connector. Zero fields take the defaults noted on
// each.
type Config struct {
	// IMAP is the IMAP server, "host:port". Default "imap.gmail.com:993".
	IMAP string
	// SMTP is the submission server, "host:port". Default "smtp.gmail.com:587".
	SMTP string
	// Username logs in to both servers.
	Username string
	// Password is the resolved secret (the host reads it from password_env).
	// It never appears in a log line, a result or an error.
	Password string
	// From is the sender address. Default Username.
	From string
	// SentFolder is where sent mail is filed, and where Reconcile looks.
	// Default "[Gmail]/Sent Mail".
	SentFolder string
	// Inbox is the mailbox search reads when none is given. Default "INBOX".
	Inbox string
	// TLS is "implicit", "starttls" or "none". One setting serves two
	// servers, so well-known ports decide for themselves: implicit on 993
	// and 465, starttls on 587, 143 and 25; that makes the usual "imap:993,
	// smtp:587" pair work with no setting. On any other port TLS applies,
	// defaulting to implicit. "none" turns TLS off for both and is refused
	// unless both hosts are loopback (tests).
	TLS string
	// TLSConfig overrides the TLS client configuration (tests: a self-signed
	// root). ServerName is filled from the address when empty.
	TLSConfig *tls.Config
	// AppendSent appends a copy of each sent message to SentFolder. The
	// gmail preset leaves it false: Gmail files sent mail itself, and a
	// second copy would show twice.
	AppendSent bool
	// Timeout bounds each call (connect, commands, and the wait for the
	// final SMTP reply). Default 30s.
	Timeout time.Duration
}

// String shows the configuration without the password, so that logging a
// Config (or a %+v of something holding one) cannot leak it.
func (cfg Config) String() string {
	pw := ""
	if cfg.Password != "" {
		pw = "[set]"
	}
	return fmt.Sprintf("mail.Config{IMAP:%s SMTP:%s Username:%s Password:%s From:%s SentFolder:%q Inbox:%q TLS:%s AppendSent:%t Timeout:%s}",
		cfg.IMAP, cfg.SMTP, cfg.Username, pw, cfg.From, cfg.SentFolder, cfg.Inbox, cfg.TLS, cfg.AppendSent, cfg.Timeout)
}

// GoString is String, for %#v.
func (cfg Config) GoString() string { return cfg.String() }

func (cfg Config) withDefaults() Config {
	if cfg.IMAP == "" {
		cfg.IMAP = "imap.gmail.com:993"
	}
	if cfg.SMTP == "" {
		cfg.SMTP = "smtp.gmail.com:587"
	}
	if cfg.From == "" {
		cfg.From = cfg.Username
	}
	if cfg.SentFolder == "" {
		cfg.SentFolder = "[Gmail]/Sent Mail"
	}
	if cfg.Inbox == "" {
		cfg.Inbox = "INBOX"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	return cfg
}

// tlsModeFor picks the TLS mode for one server address. An explicit "none"
// wins everywhere (loopback tests); otherwise the well-known ports decide,
// and cfg.TLS is the fallback for other ports.
func (cfg Config) tlsModeFor(addr string) string {
	if cfg.TLS == TLSNone {
		return TLSNone
	}
	_, port, _ := net.SplitHostPort(addr)
	switch port {
	case "993", "465":
		return TLSImplicit
	case "587", "143", "25":
		return TLSStartTLS
	}
	if cfg.TLS != "" {
		return cfg.TLS
	}
	return TLSImplicit
}

func (cfg Config) validate() error {
	switch cfg.TLS {
	case "", TLSImplicit, TLSStartTLS, TLSNone:
	default:
		return fmt.Errorf("mail: tls %q is not one of implicit, starttls, none", cfg.TLS)
	}
	for _, a := range []struct{ key, addr string }{{"imap", cfg.IMAP}, {"smtp", cfg.SMTP}} {
		host, port, err := net.SplitHostPort(a.addr)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("mail: %s %q is not host:port", a.key, a.addr)
		}
		// Sending a password in clear text is only acceptable when it never
		// leaves the machine.
		if cfg.TLS == TLSNone && !isLoopback(host) {
			return fmt.Errorf("mail: tls \"none\" is only allowed for a loopback %s host, not %q", a.key, host)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfig returns the TLS client configuration for a server at addr.
func (cfg Config) tlsConfig(addr string) *tls.Config {
	var c *tls.Config
	if cfg.TLSConfig != nil {
		c = cfg.TLSConfig.Clone()
	} else {
		c = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.ServerName == "" {
		c.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return c
}

// New returns a mail connector for cfg, with defaults filled in. It fails
// only on a malformed configuration; missing credentials surface as Auth
// errors when a method is called, so the user is asked to reconnect.
func New(cfg Config) (*Connector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Connector{cfg: cfg}, nil
}

// Gmail returns the mail connector with Gmail's defaults: imap.gmail.com:993,
// smtp.gmail.com:587 (STARTTLS), "[Gmail]/Sent Mail", and no copy appended to
// the Sent folder, because Gmail files every message sent through its SMTP
// server itself. Its Name is still "mail": the host registers it under the
// alias "gmail".
func Gmail(cfg Config) (*Connector, error) {
	if cfg.IMAP == "" {
		cfg.IMAP = "imap.gmail.com:993"
	}
	if cfg.SMTP == "" {
		cfg.SMTP = "smtp.gmail.com:587"
	}
	if cfg.SentFolder == "" {
		cfg.SentFolder = "[Gmail]/Sent Mail"
	}
	cfg.AppendSent = false
	return New(cfg)
}
