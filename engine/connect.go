package engine

import (
	"fmt"
	"os"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
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
	// Accounts holds the accounts connectors sign in with; nil: opened
	// from the config (credentials.json next to the config file).
	Accounts *accounts.Store
}

// Connectors builds the registry of every connector from the config.
// Credentials come from the file (checked to be mode 0600 on load) or the
// environment variables it names; scripts never see them.
func Connectors(cfg config.Config, opts ConnectorOpts) (*connectors.Registry, error) {
	reg := connectors.NewRegistry()
	accts := opts.Accounts
	if accts == nil {
		var err error
		if accts, err = OpenAccounts(cfg); err != nil {
			return nil, err
		}
	}
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
	hosts, err := hostAccounts(cfg, accts)
	if err != nil {
		return nil, err
	}
	hc, err := khttp.New(khttp.Config{AllowHosts: cfg.Connectors.HTTP.AllowHosts, Hosts: hosts})
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
	m := cfg.Connectors.Mail
	password := m.Password
	if password == "" && m.PasswordEnv != "" {
		password = os.Getenv(m.PasswordEnv)
	}
	mc, err := mail.New(mail.Config{IMAP: m.IMAP, SMTP: m.SMTP, Username: m.Username, Password: password,
		SentFolder: m.SentFolder, TLS: m.TLS})
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
