// Package config reads keep's config file (DESIGN.md §12). A missing file
// means every default applies; an unknown key or a bad value is an error
// that names it.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"keep/storage"
	"keep/storage/userpath"
)

// Duration is a Go duration written as a string ("30s", "10m").
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		// "" is how a key says "never" (retention.compact_payloads_after)
		d.Duration = 0
		return nil
	}
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (use e.g. \"30s\", \"5m\", \"1h\")", string(b))
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalText() ([]byte, error) {
	if d.Duration == 0 {
		return []byte{}, nil
	}
	return []byte(d.String()), nil
}

type Policy struct {
	MinProducerInterval Duration          `toml:"min_producer_interval"`
	MinWake             Duration          `toml:"min_wake"`
	MaxWake             Duration          `toml:"max_wake"`
	BackoffBase         Duration          `toml:"backoff_base"`
	BackoffMax          Duration          `toml:"backoff_max"`
	TransientRetries    int               `toml:"transient_retries"`
	ReconcileAttempts   int               `toml:"reconcile_attempts"`
	Repairs             int               `toml:"repairs"`
	HandlerTimeout      Duration          `toml:"handler_timeout"`
	StaleAfter          Duration          `toml:"stale_after"`
	DefaultMutationMode storage.GrantMode `toml:"default_mutation_mode"`
	ApprovalReminder    Duration          `toml:"approval_reminder"`
	// CrashLimit: a handler whose own worker process died under it this
	// many times in a row blocks its workflow (the script may be what kills
	// it); before that a death is retried after a back-off. keep stopping
	// under a run (a restart, a kill) never counts. 0: a worker's death
	// blocks at once, as any resource failure.
	CrashLimit int `toml:"crash_limit"`
	// MaxOpenProposals: how many proposals of one workflow may wait for
	// the person at once; one more is refused (an assistant filed 1,000).
	MaxOpenProposals int `toml:"max_open_proposals"`
	// MaxProposalBytes: what one proposal may store (its script, reason,
	// diff, summary and dry run); a larger one is refused.
	MaxProposalBytes int `toml:"max_proposal_bytes"`
}

// Repair is [repair]. Repair is its own opt-in (Enabled): an [llm] set for
// `keep new` does not turn it on, and a repair only ever proposes.
type Repair struct {
	Enabled  bool   `toml:"enabled"`
	Command  string `toml:"command"`
	Endpoint string `toml:"endpoint"`
	Model    string `toml:"model"`
}

type Files struct {
	Roots []string `toml:"roots"`
}

type HTTP struct {
	AllowHosts []string `toml:"allow_hosts"`
	// Hosts hold credentials per host name: the host adds the account's
	// Authorization header, and a script may not set its own.
	Hosts map[string]HTTPHost `toml:"hosts"`
}

type HTTPHost struct {
	Account string `toml:"account"`
	// TestURL is what `keep auth test` GETs with the account's credentials
	// (default https://HOST/).
	TestURL string `toml:"test_url"`
}

type Mail struct {
	IMAP        string `toml:"imap"`
	SMTP        string `toml:"smtp"`
	Username    string `toml:"username"`
	Password    string `toml:"password"`
	PasswordEnv string `toml:"password_env"`
	// SentFolder empty: the mailbox the server marks \Sent (SPECIAL-USE).
	SentFolder string `toml:"sent_folder"`
	TLS        string `toml:"tls"`
	// Account names an [accounts.NAME]; it replaces username/password.
	Account string `toml:"account"`
	// From is the sender address; required when the login name is not one.
	From   string `toml:"from"`
	CAFile string `toml:"ca_file"`
	// Auth forces a SASL mechanism: plain, login, xoauth2, oauthbearer.
	Auth string `toml:"auth"`
	// Preset "gmail" fills in Gmail's hosts and habits.
	Preset string `toml:"preset"`
	Inbox  string `toml:"inbox"`
	// AppendSent false: the provider files sent mail itself (Microsoft
	// 365 does; the gmail preset knows Gmail does). Default true.
	AppendSent *bool `toml:"append_sent"`
	// SelfCopy false: no copy of each send to the account's own address
	// (the copy confirms a send whose final reply was lost). Default true.
	SelfCopy       *bool    `toml:"self_copy"`
	DialTimeout    Duration `toml:"dial_timeout"`
	CommandTimeout Duration `toml:"command_timeout"`
	Timeout        Duration `toml:"timeout"`
}

type Sheets struct {
	Roots []string `toml:"roots"`
	// GoogleAccount names the [accounts.NAME] a sheet named
	// "google:SPREADSHEET_ID/TAB" is read and written with.
	GoogleAccount string `toml:"google_account"`
}

// Calendar is the CalDAV connector's server (DESIGN.md §14).
type Calendar struct {
	URL      string `toml:"url"`      // CalDAV base or a calendar's own URL; empty: not configured
	Calendar string `toml:"calendar"` // a calendar's path or display name; empty: the first with events
	Account  string `toml:"account"`  // the [accounts.NAME] to sign in with; empty: none
}

type Slack struct {
	APIBase    string `toml:"api_base"`
	Token      string `toml:"token"`
	TokenEnv   string `toml:"token_env"`
	WebhookURL string `toml:"webhook_url"`
}

type Connectors struct {
	Files  Files  `toml:"files"`
	HTTP   HTTP   `toml:"http"`
	Mail   Mail   `toml:"mail"`
	Sheets Sheets `toml:"sheets"`
	Slack  Slack  `toml:"slack"`

	Calendar Calendar `toml:"calendar"`
}

type Subscription struct {
	Topic   string `toml:"topic"`
	Handler string `toml:"handler"`
}

type Events struct {
	Subscribes []Subscription `toml:"subscribes"`
}

// Retention is DESIGN.md §14's [retention]: how long finished runs' traces
// and records are kept, whether old done events keep their payloads, and
// how large keep.log grows before it is rotated.
type Retention struct {
	Traces               Duration `toml:"traces"`
	Runs                 Duration `toml:"runs"`
	CompactPayloadsAfter Duration `toml:"compact_payloads_after"` // zero: never
	LogMaxMB             int      `toml:"log_max_mb"`
}

// Config is the whole file.
type Config struct {
	Policy     Policy     `toml:"policy"`
	Repair     Repair     `toml:"repair"`
	LLM        LLM        `toml:"llm"`
	Connectors Connectors `toml:"connectors"`
	Events     Events     `toml:"events"`
	// Accounts by name (DESIGN.md §14); their secrets are in the
	// credentials file, never here.
	Accounts  map[string]Account `toml:"accounts"`
	Retention Retention          `toml:"retention"`
	// MCP servers by name (DESIGN.md §15), offered to scripts as
	// ctx.mcp.NAME.TOOL.
	MCP map[string]MCP `toml:"mcp"`

	// Path the config was read from ("" when defaults only).
	Path string `toml:"-"`
	// src is the file's text, so a value found bad after Load (by the
	// connector or account it configures) is said where it is set (At).
	src string
	// SecretsFromFile is true when a password or token was read from the
	// file itself (the file must then be mode 0600).
	SecretsFromFile bool `toml:"-"`
}

// Account is one [accounts.NAME] section.
type Account struct {
	Kind      string   `toml:"kind"` // oauth2, password, token, basic
	Username  string   `toml:"username"`
	Provider  string   `toml:"provider"` // google, microsoft; else the URLs below
	ClientID  string   `toml:"client_id"`
	Scopes    []string `toml:"scopes"`
	AuthURL   string   `toml:"auth_url"`
	TokenURL  string   `toml:"token_url"`
	DeviceURL string   `toml:"device_url"`
	RevokeURL string   `toml:"revoke_url"`
}

// CredentialsPath is credentials.json next to the config file (the
// default path's folder when no file was read).
func (c Config) CredentialsPath() string {
	p := c.Path
	if p == "" {
		p = DefaultPath()
	}
	return filepath.Join(filepath.Dir(p), "credentials.json")
}

// Default returns every default of DESIGN.md §8 and §12.
func Default() Config {
	return Config{
		Policy: Policy{
			MinProducerInterval: Duration{time.Minute},
			MinWake:             Duration{30 * time.Second},
			MaxWake:             Duration{24 * time.Hour},
			BackoffBase:         Duration{10 * time.Second},
			BackoffMax:          Duration{10 * time.Minute},
			TransientRetries:    5,
			ReconcileAttempts:   5,
			Repairs:             2,
			HandlerTimeout:      Duration{5 * time.Minute},
			StaleAfter:          Duration{168 * time.Hour},
			DefaultMutationMode: storage.GrantAsk,
			ApprovalReminder:    Duration{time.Hour},
			CrashLimit:          3,
			MaxOpenProposals:    3,
			MaxProposalBytes:    512 << 10,
		},
		Connectors: Connectors{
			Files: Files{Roots: []string{"~/Keep"}},
			Mail: Mail{IMAP: "imap.gmail.com:993", SMTP: "smtp.gmail.com:587", PasswordEnv: "KEEP_MAIL_PASSWORD", Inbox: "INBOX",
				DialTimeout: Duration{15 * time.Second}, CommandTimeout: Duration{time.Minute}, Timeout: Duration{2 * time.Minute}},
			Sheets: Sheets{Roots: []string{"~/Keep"}},
			Slack:  Slack{APIBase: "https://slack.com/api", TokenEnv: "KEEP_SLACK_TOKEN"},
		},
		Events:    Events{Subscribes: []Subscription{{Topic: "approval.requested", Handler: "notify_user"}}},
		LLM:       LLM{APIKeyEnv: "KEEP_LLM_API_KEY"},
		Retention: Retention{Traces: Duration{720 * time.Hour}, Runs: Duration{720 * time.Hour}, LogMaxMB: 10},
	}
}

// LLM is the chat-completions endpoint `keep new` and `keep edit` draft
// with, and the repairer uses when [repair] names none (DESIGN.md §14).
type LLM struct {
	// Endpoint is an OpenAI-compatible base URL ("https://api.openai.com/v1")
	// or the chat-completions URL itself. Empty: no LLM.
	Endpoint string `toml:"endpoint"`
	Model    string `toml:"model"`
	// APIKeyEnv names the environment variable holding the key, if the
	// endpoint needs one.
	APIKeyEnv string `toml:"api_key_env"`
}

// DefaultPath is $XDG_CONFIG_HOME/keep/config.toml.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "keep", "config.toml")
}

// Load reads the file at path over the defaults. A missing file at the
// default path is no error; a missing file named explicitly is.
func Load(path string, explicit bool) (Config, error) {
	cfg := Default()
	// a named pipe or a device is refused, never waited on
	b, err := userpath.ReadFile("config file", path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return cfg, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, fmt.Errorf("config %s does not exist: without --config keep runs on the defaults "+
			"(the files connector may touch %s; every mutation asks first); keep init %s writes them there to edit",
			path, strings.Join(cfg.Connectors.Files.Roots, ", "), filepath.Dir(path))
	}
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	cfg.Path, cfg.src = path, string(b)
	// a list in the file replaces the default list; decoding over it would
	// merge the file's first entry into the default one
	defaults := cfg.Events.Subscribes
	cfg.Events.Subscribes = nil
	src := string(b)
	md, err := toml.Decode(src, &cfg)
	if err != nil {
		return cfg, decodeError(path, src, err)
	}
	if !md.IsDefined("events", "subscribes") {
		cfg.Events.Subscribes = defaults
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		return cfg, unknownKeys(path, src, md, keys)
	}
	cfg.SecretsFromFile = cfg.Connectors.Mail.Password != "" || cfg.Connectors.Slack.Token != ""
	if cfg.SecretsFromFile {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return cfg, fmt.Errorf("config %s: holds a password or token but is readable by others (mode %04o); run: chmod 600 %s",
				path, fi.Mode().Perm(), path)
		}
	}
	if err := cfg.validate(); err != nil {
		if ke, ok := errors.AsType[*keyError](err); ok {
			return cfg, errors.New(located(path, src, ke.key, ke.nth, ke.Error()))
		}
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

func (c Config) validate() error {
	p := c.Policy
	positive := []struct {
		key string
		d   time.Duration
	}{
		{"policy.min_producer_interval", p.MinProducerInterval.Duration},
		{"policy.min_wake", p.MinWake.Duration},
		{"policy.max_wake", p.MaxWake.Duration},
		{"policy.backoff_base", p.BackoffBase.Duration},
		{"policy.backoff_max", p.BackoffMax.Duration},
		{"policy.handler_timeout", p.HandlerTimeout.Duration},
		{"policy.stale_after", p.StaleAfter.Duration},
		{"policy.approval_reminder", p.ApprovalReminder.Duration},
	}
	for _, x := range positive {
		if x.d <= 0 {
			return bad(x.key, "%s must be positive, got %s", x.key, x.d)
		}
	}
	if p.MinProducerInterval.Duration < time.Second {
		return bad("policy.min_producer_interval", "policy.min_producer_interval may not be below 1s, got %s", p.MinProducerInterval.Duration)
	}
	if p.MinWake.Duration > p.MaxWake.Duration {
		return bad("policy.min_wake", "policy.min_wake (%s) is above policy.max_wake (%s)", p.MinWake.Duration, p.MaxWake.Duration)
	}
	for _, x := range []struct {
		key string
		v   int
	}{{"policy.transient_retries", p.TransientRetries}, {"policy.reconcile_attempts", p.ReconcileAttempts}, {"policy.repairs", p.Repairs}, {"policy.crash_limit", p.CrashLimit}} {
		if x.v < 0 {
			return bad(x.key, "%s may not be negative, got %d", x.key, x.v)
		}
	}
	for _, x := range []struct {
		key string
		v   int
	}{{"policy.max_open_proposals", p.MaxOpenProposals}, {"policy.max_proposal_bytes", p.MaxProposalBytes}} {
		if x.v < 1 {
			return bad(x.key, "%s must be at least 1, got %d", x.key, x.v)
		}
	}
	if !slices.Contains(storage.GrantModes(), p.DefaultMutationMode) {
		return bad("policy.default_mutation_mode", "policy.default_mutation_mode must be ask, allow or deny, got %q", p.DefaultMutationMode)
	}
	r := c.Retention
	for _, x := range []struct {
		key string
		d   time.Duration
	}{{"retention.traces", r.Traces.Duration}, {"retention.runs", r.Runs.Duration}} {
		if x.d < time.Hour {
			return bad(x.key, "%s must be at least 1h, got %s", x.key, x.d)
		}
	}
	if r.CompactPayloadsAfter.Duration < 0 {
		return bad("retention.compact_payloads_after", "retention.compact_payloads_after may not be negative, got %s", r.CompactPayloadsAfter.Duration)
	}
	if r.LogMaxMB < 1 {
		return bad("retention.log_max_mb", "retention.log_max_mb must be at least 1, got %d", r.LogMaxMB)
	}
	if c.Repair.Command != "" && c.Repair.Endpoint != "" {
		return bad("repair.endpoint", "repair.command and repair.endpoint are both set; choose one")
	}
	if c.Repair.Enabled && c.Repair.Command == "" && c.Repair.Endpoint == "" && strings.TrimSpace(c.LLM.Endpoint) == "" {
		return bad("repair.enabled", "repair.enabled is true but there is no repairer: set repair.command, repair.endpoint or [llm] endpoint")
	}
	for i, h := range c.Connectors.HTTP.AllowHosts {
		// a blank entry would be dropped, and a list of only blanks is
		// empty: any host
		if strings.TrimSpace(h) == "" {
			return bad("connectors.http.allow_hosts", "connectors.http.allow_hosts[%d] is empty: name a host (\"api.example.com\"), or leave the list empty for any host", i)
		}
	}
	m := c.Connectors.Mail
	for _, x := range []struct {
		key string
		d   time.Duration
	}{{"connectors.mail.dial_timeout", m.DialTimeout.Duration}, {"connectors.mail.command_timeout", m.CommandTimeout.Duration}, {"connectors.mail.timeout", m.Timeout.Duration}} {
		if x.d < 0 {
			return bad(x.key, "%s may not be negative, got %s", x.key, x.d)
		}
	}
	for host, h := range c.Connectors.HTTP.Hosts {
		if _, ok := c.Accounts[h.Account]; !ok {
			return &keyError{key: []string{"connectors", "http", "hosts", host, "account"}, err: fmt.Errorf("connectors.http.hosts.%q.account: account %q is not defined (add [accounts.%s])", host, h.Account, h.Account)}
		}
	}
	if err := c.validateMCP(); err != nil {
		return err
	}
	for i, s := range c.Events.Subscribes {
		if s.Topic == "" || s.Handler == "" {
			return &keyError{key: []string{"events", "subscribes"}, nth: i, err: fmt.Errorf("events.subscribes[%d] needs both topic and handler", i)}
		}
	}
	return nil
}

// ExpandHome turns a leading "~" into the home directory.
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}
