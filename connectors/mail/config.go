// Package mail is the mail connector: it reads a mailbox over IMAP (search by
// UID cursor, get by id), changes messages (read, flagged, moved, labelled)
// and sends over SMTP with a Message-ID the host chooses, so that a send
// whose outcome is unknown can be reconciled by looking for that Message-ID
// in the Sent folder and in the copy it routes back to the account
// (DESIGN.md §6, §7.3).
//
// The same connector serves the "gmail" preset: Gmail speaks plain IMAP and
// SMTP (with XOAUTH2), and only its defaults differ.
package mail

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	netmail "net/mail"
	"os"
	"strings"
	"time"

	"keep/connectors"
)

// TLS modes for Config.TLS.
const (
	TLSImplicit = "implicit" // TLS from the first byte (IMAPS 993, SMTPS 465)
	TLSStartTLS = "starttls" // plain connect, then STARTTLS (587, 143)
	TLSNone     = "none"     // no TLS at all; only allowed on loopback
)

// SASL mechanisms for Config.Auth.
const (
	AuthPlain       = "plain"
	AuthLogin       = "login"
	AuthXOAuth2     = "xoauth2"
	AuthOAuthBearer = "oauthbearer"
)

// PresetGmail is the Config.Preset of Gmail (and Google Workspace).
const PresetGmail = "gmail"

// Config configures a mail connector. Zero fields take the defaults noted on
// each.
type Config struct {
	// Preset is "" or "gmail". The gmail preset fills in Gmail's hosts,
	// knows that Gmail files sent mail itself, and logs in with XOAUTH2 when
	// the account is an oauth2 one. An IMAP host of imap.gmail.com implies
	// it.
	Preset string
	// IMAP is the IMAP server, "host:port". Default "imap.gmail.com:993".
	IMAP string
	// SMTP is the submission server, "host:port". Default "smtp.gmail.com:587".
	SMTP string
	// Account holds the credentials when set (the host's accounts: an
	// oauth2 account logs in with XOAUTH2 or OAUTHBEARER, a password one
	// with PLAIN or LOGIN). Nil: Username and Password below.
	Account connectors.Account
	// Username logs in to both servers when Account is nil.
	Username string
	// Password is the resolved secret when Account is nil (the host reads
	// it from password_env). It never appears in a log line, a result or an
	// error.
	Password string
	// Auth forces one SASL mechanism: "plain", "login", "xoauth2" or
	// "oauthbearer". Default: the best one the server offers for the kind
	// of secret (see auth.go).
	Auth string
	// From is the sender address, bare or with a display name ("Ann
	// <ann@example.com>"). Default the login name, which must then be an
	// address: a login name without a domain would send "From: <alice@>".
	// New keeps the bare address here and the name in FromName.
	From string
	// FromName is the display name of From (RFC 5322), set by New from a
	// From that carries one.
	FromName string
	// SentFolder is where sent mail is filed, and where Reconcile looks.
	// Default: the mailbox the server marks \Sent (RFC 6154 SPECIAL-USE).
	SentFolder string
	// Inbox is the mailbox search reads when none is given, and where the
	// copy a send routes back to the account arrives. Default "INBOX".
	Inbox string
	// TLS is "implicit", "starttls" or "none". One setting serves two
	// servers, so well-known ports decide for themselves: implicit on 993
	// and 465, starttls on 587, 143 and 25; that makes the usual "imap:993,
	// smtp:587" pair work with no setting. On any other port TLS applies,
	// defaulting to implicit. "none" turns TLS off for both and is refused
	// unless both hosts are loopback (tests).
	TLS string
	// CAFile is a PEM file of extra certificate authorities to trust, for a
	// server with a self-signed certificate. The system's roots still apply.
	CAFile string
	// TLSConfig overrides the TLS client configuration (tests). ServerName
	// is filled from the address when empty.
	TLSConfig *tls.Config
	// ServerFilesSent says the provider files every message sent through
	// its SMTP server in the Sent folder itself (Gmail does; the preset
	// sets it). Otherwise the connector appends a copy there (IMAP APPEND),
	// as mail clients do.
	ServerFilesSent bool
	// NoSelfCopy turns off the envelope-only copy each send routes back to
	// the account's own address. That copy is what confirms a send whose
	// final SMTP reply was lost on a server that does not file sent mail
	// itself; the gmail preset turns it off because Gmail files the message
	// in Sent the moment it accepts it.
	NoSelfCopy bool
	// DialTimeout bounds connecting: TCP and the TLS handshake. Default 15s.
	DialTimeout time.Duration
	// CommandTimeout bounds the wait for each server reply once a command is
	// sent (the greeting included, and the reply to the final dot of a
	// message). Default 60s.
	CommandTimeout time.Duration
	// Timeout bounds a whole call. Default 2m.
	Timeout time.Duration
	// MessageIDSecret keys the Message-IDs of sends (messageIDFor): a
	// secret the host holds, never a script, the same across restarts, so
	// that a send whose outcome a crash left unknown is found again. Empty:
	// a random one for this connector's life, so ids stay unguessable, but
	// a send left uncertain by a restart is no longer recognised and its
	// reconciliation ends with the person asked.
	// A string, not []byte, so that a Config stays comparable.
	MessageIDSecret string
}

// String shows the configuration without the password, so that logging a
// Config (or a %+v of something holding one) cannot leak it.
func (cfg Config) String() string {
	pw := ""
	if cfg.Password != "" {
		pw = "[set]"
	}
	account := ""
	if cfg.Account != nil {
		account = cfg.Account.Name()
	}
	return fmt.Sprintf("mail.Config{Preset:%s IMAP:%s SMTP:%s Account:%s Username:%s Password:%s Auth:%s From:%s SentFolder:%q Inbox:%q TLS:%s CAFile:%s ServerFilesSent:%t NoSelfCopy:%t DialTimeout:%s CommandTimeout:%s Timeout:%s}",
		cfg.Preset, cfg.IMAP, cfg.SMTP, account, cfg.Username, pw, cfg.Auth, cfg.From, cfg.SentFolder, cfg.Inbox, cfg.TLS, cfg.CAFile,
		cfg.ServerFilesSent, cfg.NoSelfCopy, cfg.DialTimeout, cfg.CommandTimeout, cfg.Timeout)
}

// GoString is String, for %#v.
func (cfg Config) GoString() string { return cfg.String() }

// login is the login name: the account's, else Username.
func (cfg Config) login() string {
	if cfg.Account != nil {
		return cfg.Account.Username()
	}
	return cfg.Username
}

func (cfg Config) withDefaults() Config {
	if cfg.IMAP == "" {
		cfg.IMAP = "imap.gmail.com:993"
	}
	if cfg.SMTP == "" {
		cfg.SMTP = "smtp.gmail.com:587"
	}
	if host, _, _ := net.SplitHostPort(cfg.IMAP); strings.EqualFold(host, "imap.gmail.com") && cfg.Preset == "" {
		cfg.Preset = PresetGmail
	}
	if cfg.Preset == PresetGmail {
		cfg.ServerFilesSent = true
		cfg.NoSelfCopy = true
	}
	if cfg.From == "" {
		cfg.From = cfg.login()
	}
	if cfg.Inbox == "" {
		cfg.Inbox = "INBOX"
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 15 * time.Second
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
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
	switch cfg.Preset {
	case "", PresetGmail:
	default:
		return fmt.Errorf("mail: preset %q is not one of gmail or empty", cfg.Preset)
	}
	switch cfg.TLS {
	case "", TLSImplicit, TLSStartTLS, TLSNone:
	default:
		return fmt.Errorf("mail: tls %q is not one of implicit, starttls, none", cfg.TLS)
	}
	switch cfg.Auth {
	case "", AuthPlain, AuthLogin, AuthXOAuth2, AuthOAuthBearer:
	default:
		return fmt.Errorf("mail: auth %q is not one of plain, login, xoauth2, oauthbearer", cfg.Auth)
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
	// A login name without a domain would go out as "From: <alice@>";
	// only an address will do.
	if cfg.From != "" && !isAddress(cfg.From) {
		if cfg.From == cfg.login() {
			return fmt.Errorf("mail: from is required: the login name %q is not an email address", cfg.From)
		}
		return fmt.Errorf("mail: from %q is not an email address", cfg.From)
	}
	return nil
}

// isAddress is true for a bare addr-spec with a local part and a domain.
func isAddress(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " <>\r\n,")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loadTLS builds the TLS client configuration once: the override, or the
// system roots plus CAFile.
func (cfg Config) loadTLS() (*tls.Config, error) {
	if cfg.TLSConfig != nil {
		return cfg.TLSConfig.Clone(), nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("mail: ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mail: ca_file %s holds no PEM certificate", cfg.CAFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// tlsConfig returns the TLS client configuration for a server at addr.
func (c *Connector) tlsConfig(addr string) *tls.Config {
	tc := c.tls.Clone()
	if tc.ServerName == "" {
		tc.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return tc
}

// New returns a mail connector for cfg, with defaults filled in. It fails
// only on a malformed configuration; missing credentials surface as Auth
// errors when a method is called, so the user is asked to reconnect.
func New(cfg Config) (*Connector, error) {
	if strings.ContainsAny(cfg.From, "<\"") {
		a, err := netmail.ParseAddress(cfg.From)
		if err != nil {
			return nil, fmt.Errorf("mail: from %q is not an address (ann@example.com, or Ann <ann@example.com>): %v", cfg.From, err)
		}
		cfg.From, cfg.FromName = a.Address, a.Name
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tc, err := cfg.loadTLS()
	if err != nil {
		return nil, err
	}
	c := &Connector{cfg: cfg, tls: tc, maxMessage: maxMessage, maxSearch: maxSearchBytes}
	c.UseSecret([]byte(cfg.MessageIDSecret))
	c.secrets.remember(cfg.Username, cfg.Password)
	return c, nil
}

// Gmail returns the mail connector with Gmail's defaults: imap.gmail.com:993,
// smtp.gmail.com:587 (STARTTLS), XOAUTH2 for an oauth2 account, the Sent
// folder found by its \Sent attribute, and no copy appended to it, because
// Gmail files every message sent through its SMTP server itself. Its Name is
// still "mail": the host registers it under the alias "gmail".
func Gmail(cfg Config) (*Connector, error) {
	cfg.Preset = PresetGmail
	return New(cfg)
}
