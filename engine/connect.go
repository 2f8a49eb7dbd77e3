package engine

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/connectors/calendar"
	"keep/connectors/feed"
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
	// Notify is handed every notify.send, and says whether a screen took
	// it (Subscribers.NotifySend: an open TUI rings the bell and shows a
	// toast); nil: only notify-send shows them.
	Notify func(title, body string) bool
	// Now is the clock ctx.system.now reads; defaults to time.Now. The
	// engine's injected clock goes here so scripts and scheduler agree.
	Now func() time.Time
	// DBPath and ConfigPath are keep's own database and config file: they,
	// and the files beside them that are keep's (DESIGN §2), are refused
	// by every connector that takes paths, whatever its roots. ConfigPath
	// defaults to the path the config was read from.
	DBPath     string
	ConfigPath string
	// Accounts holds the accounts connectors sign in with; nil: opened
	// from the config (credentials.json next to the config file).
	Accounts *accounts.Store
	// Account, when set, resolves account names instead of Accounts (tests
	// hand connectors an account of their own).
	Account func(name string) (connectors.Account, error)
	// Logger receives what connectors log on their own (an MCP server's
	// stderr, its starts and deaths): keep.log. Nil: discarded.
	Logger *slog.Logger
	// MCPCacheDir holds the servers' cached tool lists; "": DBPath's name
	// with ".mcp" (keep.db.mcp, beside it), else the user's cache folder.
	MCPCacheDir string
}

// KeepPlaces are the folders keep writes its own files into
// (connectors.Place): the database's folder, where every file is keep's
// (the database, its WAL, shared memory, lock and socket, keep.log and its
// rotations, a database replaced by restore) and every folder named after
// the database (its feeds and MCP caches); the config's folder, where
// every file is keep's (the config, credentials.json and its lock,
// service.env); and the MCP cache when it is elsewhere. Folders beside the
// database not named after it are the person's: the offline demo's, which
// keep hands its workflow as a files root.
func KeepPlaces(dbPath, configPath, mcpCache string) []connectors.Place {
	var out []connectors.Place
	// a path given through a link (--db ~/k.db → /data/keep.db) is keep's
	// where it is named and where it leads: SQLite, the lock and the log
	// keep syncs follow the link, keep.log and the socket stay beside it
	for _, p := range namedAndReal(dbPath) {
		out = append(out, connectors.Place{Dir: filepath.Dir(p), Own: filepath.Base(p), Why: "beside keep's database"})
	}
	for _, p := range namedAndReal(configPath) {
		out = append(out, connectors.Place{Dir: filepath.Dir(p), Why: "beside keep's config"})
	}
	if mcpCache != "" {
		out = append(out, connectors.Place{Dir: mcpCache, Whole: true, Why: "in keep's cache of MCP tool lists"})
	}
	return out
}

// namedAndReal is path as given and, when a link leads elsewhere, where it
// leads; none for "".
func namedAndReal(path string) []string {
	if path == "" {
		return nil
	}
	out := []string{path}
	if abs, err := filepath.Abs(path); err == nil {
		if real, err := connectors.RealPath(abs); err == nil && real != abs {
			out = append(out, real)
		}
	}
	return out
}

// account resolves the account a config key names; "" is no account.
func (o ConnectorOpts) account(key, name string) (connectors.Account, error) {
	if name == "" {
		return nil, nil
	}
	resolve := o.Accounts.Account
	if o.Account != nil {
		resolve = o.Account
	}
	a, err := resolve(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return a, nil
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
		opts.Accounts = accts
	}
	addHeld(reg.Held(), cfg, accts)
	expand := func(roots []string) []string {
		out := make([]string, len(roots))
		for i, r := range roots {
			out[i] = config.ExpandHome(r)
		}
		return out
	}
	configPath := opts.ConfigPath
	if configPath == "" {
		configPath = cfg.Path
	}
	protected, err := connectors.NewProtected(KeepPlaces(opts.DBPath, configPath, mcpCacheDir(opts))...)
	if err != nil {
		return nil, err
	}
	fc, err := files.New(files.Config{Roots: expand(cfg.Connectors.Files.Roots), Protected: protected})
	if err != nil {
		return nil, cfg.At("connectors.files", err)
	}
	reg.Register(fc)
	hosts, err := hostAccounts(cfg, accts)
	if err != nil {
		return nil, err
	}
	hc, err := khttp.New(khttp.Config{AllowHosts: cfg.Connectors.HTTP.AllowHosts, Hosts: hosts})
	if err != nil {
		return nil, cfg.At("connectors.http", err)
	}
	reg.Register(hc)
	// feeds are fetched through the http connector, so allow_hosts holds for both
	var feedDir string
	if opts.DBPath != "" {
		// beside the database, under its name: keep's own, out of every
		// script's reach (KeepPlaces)
		feedDir = opts.DBPath + ".feeds"
	}
	fdc, err := feed.New(feed.Config{HTTP: hc, Dir: feedDir})
	if err != nil {
		return nil, cfg.At("connectors.feed", err)
	}
	reg.Register(fdc)
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
	mc, err := mailConnector(cfg, opts)
	if err != nil {
		return nil, cfg.At("connectors.mail", err)
	}
	reg.Register(mc, "gmail")
	googleAccount, err := opts.account("connectors.sheets.google_account", cfg.Connectors.Sheets.GoogleAccount)
	if err != nil {
		return nil, err
	}
	shc, err := sheets.New(sheets.Config{Roots: expand(cfg.Connectors.Sheets.Roots), GoogleAccount: googleAccount, Protected: protected})
	if err != nil {
		return nil, cfg.At("connectors.sheets", err)
	}
	reg.Register(shc)
	s := cfg.Connectors.Slack
	slackAccount, err := configuredAccount(accts, SlackAccount, cfg)
	if err != nil {
		return nil, err
	}
	slc, err := slack.New(slack.Config{APIBase: s.APIBase, Account: slackAccount, WebhookURL: s.WebhookURL})
	if err != nil {
		return nil, cfg.At("connectors.slack", err)
	}
	reg.Register(slc)
	cal := cfg.Connectors.Calendar
	calAccount, err := opts.account("connectors.calendar.account", cal.Account)
	if err != nil {
		return nil, err
	}
	cc, err := calendar.New(calendar.Config{URL: cal.URL, Calendar: cal.Calendar, Account: calAccount, Now: opts.Now})
	if err != nil {
		return nil, cfg.At("connectors.calendar", err)
	}
	reg.Register(cc)
	if err := mcpConnectors(cfg, opts, reg); err != nil {
		return nil, err
	}
	return reg, nil
}

// mailConnector builds the mail connector from [connectors.mail]: an
// account when one is named, else the configured account of username and
// password (from the file or password_env).
func mailConnector(cfg config.Config, opts ConnectorOpts) (*mail.Connector, error) {
	m := cfg.Connectors.Mail
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
	a, err := opts.account("connectors.mail.account", m.Account)
	if err != nil {
		return nil, err
	}
	if a == nil {
		if a, err = configuredAccount(opts.Accounts, MailAccount, cfg); err != nil {
			return nil, err
		}
	}
	if a != nil {
		mc.Account, mc.Username = a, ""
	}
	return mail.New(mc)
}
