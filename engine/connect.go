package engine

import (
	"fmt"
	"os"
	"time"

	"keep/connectors"
	"keep/connectors/files"
	khttp "keep/connectors/http"
	"keep/connectors/mail"
	"keep/connectors/notify"
	"keep/connectors/sheets"
	"keep/connectors/slack"
	"keep/connectors/system"
	"keep/engine/config"
)

// ConnectorOpts are the host's own hooks into connectors.
type ConnectorOpts struct {
	// Notify receives desktop notifications when notify-send is missing
	// (the TUI shows them as a toast and rings the bell).
	Notify func(title, body string)
	// Now is the clock ctx.system.now reads; defaults to time.Now. The
	// engine's injected clock goes here so scripts and scheduler agree.
	Now func() time.Time
	// Account resolves an [accounts.NAME] a connector's config names. Nil:
	// no accounts, and a connector that names one is a config error.
	Account func(name string) (connectors.Account, error)
}

// Connectors builds the registry of every connector from the config.
// Credentials come from the file (checked to be mode 0600 on load) or the
// environment variables it names; scripts never see them.
func Connectors(cfg config.Config, opts ConnectorOpts) (*connectors.Registry, error) {
	reg := connectors.NewRegistry()
	// calendar events are a known input source with no connector of its own yet
	reg.AddSource("calendar", "event")
	expand := func(roots []string) []string {
		out := make([]string, len(roots))
		for i, r := range roots {
			out[i] = config.ExpandHome(r)
		}
		return out
	}
	fc, err := files.New(files.Config{Roots: expand(cfg.Connectors.Files.Roots)})
	if err != nil {
		return nil, fmt.Errorf("connectors.files: %w", err)
	}
	reg.Register(fc)
	hc, err := khttp.New(khttp.Config{AllowHosts: cfg.Connectors.HTTP.AllowHosts})
	if err != nil {
		return nil, fmt.Errorf("connectors.http: %w", err)
	}
	reg.Register(hc)
	sc, err := system.New(system.Config{Now: opts.Now})
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	reg.Register(sc)
	nc, err := notify.New(notify.Config{Sink: opts.Notify})
	if err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	reg.Register(nc)
	mc, err := mailConnector(cfg.Connectors.Mail, opts)
	if err != nil {
		return nil, fmt.Errorf("connectors.mail: %w", err)
	}
	reg.Register(mc, "gmail")
	shc, err := sheets.New(sheets.Config{Roots: expand(cfg.Connectors.Sheets.Roots)})
	if err != nil {
		return nil, fmt.Errorf("connectors.sheets: %w", err)
	}
	reg.Register(shc)
	s := cfg.Connectors.Slack
	token := s.Token
	if token == "" && s.TokenEnv != "" {
		token = os.Getenv(s.TokenEnv)
	}
	slc, err := slack.New(slack.Config{APIBase: s.APIBase, Token: token, WebhookURL: s.WebhookURL})
	if err != nil {
		return nil, fmt.Errorf("connectors.slack: %w", err)
	}
	reg.Register(slc)
	return reg, nil
}

// mailConnector builds the mail connector from [connectors.mail]: an
// account when one is named, else username and password (from the file or
// password_env).
func mailConnector(m config.Mail, opts ConnectorOpts) (*mail.Connector, error) {
	mc := mail.Config{
		Preset: m.Preset, IMAP: m.IMAP, SMTP: m.SMTP, Username: m.Username, From: m.From, Auth: m.Auth,
		SentFolder: m.SentFolder, Inbox: m.Inbox, TLS: m.TLS, CAFile: config.ExpandHome(m.CAFile),
		DialTimeout: m.DialTimeout.Duration, CommandTimeout: m.CommandTimeout.Duration, Timeout: m.Timeout.Duration,
	}
	if m.AppendSent != nil {
		mc.ServerFilesSent = !*m.AppendSent
	}
	if m.SelfCopy != nil {
		mc.NoSelfCopy = !*m.SelfCopy
	}
	if m.Account != "" {
		if opts.Account == nil {
			return nil, fmt.Errorf("account %q: no accounts are configured", m.Account)
		}
		a, err := opts.Account(m.Account)
		if err != nil {
			return nil, fmt.Errorf("account %q: %w", m.Account, err)
		}
		mc.Account, mc.Username = a, ""
	} else {
		mc.Password = m.Password
		if mc.Password == "" && m.PasswordEnv != "" {
			mc.Password = os.Getenv(m.PasswordEnv)
		}
	}
	return mail.New(mc)
}
