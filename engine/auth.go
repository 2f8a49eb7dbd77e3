package engine

// The auth-failure path (DESIGN.md §14): a refused sign-in blocks the
// workflow as "auth" until the user signs in to the account again; the
// sign-in itself (keep auth login, or the credentials file changing under
// a running engine) lifts every block that names the account.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/ledger"
	"keep/storage"
)

// AccountView is an account and its state, without secrets.
type AccountView = accounts.Status

// Account states.
const (
	AccountOK          = accounts.StateOK
	AccountExpiresSoon = accounts.StateExpiresSoon
	AccountNeedsSignIn = accounts.StateNeedsSignIn
)

// AccountLister is the part of the API that lists accounts; the in-process
// engine implements it.
type AccountLister interface {
	Accounts(ctx context.Context) ([]AccountView, error)
}

var _ AccountLister = (*Engine)(nil)

// Accounts lists the configured accounts and their state (ok, expires
// soon, needs sign-in).
func (e *Engine) Accounts(ctx context.Context) ([]AccountView, error) {
	if e.accounts == nil {
		return []AccountView{}, nil
	}
	return e.accounts.Statuses()
}

// OpenAccounts is the accounts store of a config: definitions from
// [accounts.*], secrets from credentials.json next to the config file.
func OpenAccounts(cfg config.Config) (*accounts.Store, error) {
	return openAccounts(cfg, cfg.CredentialsPath())
}

func openAccounts(cfg config.Config, path string) (*accounts.Store, error) {
	defs := make([]accounts.Def, 0, len(cfg.Accounts))
	for name, a := range cfg.Accounts {
		defs = append(defs, accounts.Def{Name: name, Kind: a.Kind, Username: a.Username, Provider: a.Provider, ClientID: a.ClientID,
			Scopes: a.Scopes, AuthURL: a.AuthURL, TokenURL: a.TokenURL, DeviceURL: a.DeviceURL, RevokeURL: a.RevokeURL,
			Resource: mcpResourceOf(cfg, name)})
	}
	defs = append(defs, configuredAccounts(cfg)...)
	s, err := accounts.Open(defs, accounts.Opts{Path: path})
	if de, ok := errors.AsType[*accounts.DefError](err); ok {
		if _, set := cfg.Accounts[de.Name]; set {
			return nil, cfg.At("accounts."+de.Name, de.Err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", cfg.Path, err)
	}
	return s, nil
}

// SignedIn lifts the auth blocks that name account: the user signed in to
// it again, so the failed runs go again. It returns the workflows resumed.
func (e *Engine) SignedIn(ctx context.Context, account string) ([]string, error) {
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		return nil, err
	}
	var resumed []string
	for _, w := range wfs {
		if w.BlockKind != BlockAuth || accounts.NamedIn(w.BlockReason) != account {
			continue
		}
		lifted := false
		_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
			// the block may have moved since the list was read
			if err := reread(ctx, tx, w); err != nil {
				return ledger.Decision{}, err
			}
			if w.BlockKind != BlockAuth || accounts.NamedIn(w.BlockReason) != account {
				return ledger.Decision{}, nil
			}
			lifted = true
			return e.led.Unblock(ctx, tx, w, "signed-in", true) // the consumers marked once it commits
		})
		if err != nil {
			return resumed, fmt.Errorf("workflow %s: %w", w.Name, err)
		}
		if !lifted {
			continue
		}
		e.notify(api.NoteWorkflowResumed, w.Name, w.Name+": signed in to "+account+"; going on")
		e.state(w.ID).poke()
		resumed = append(resumed, w.Name)
	}
	return resumed, nil
}

// authItem is the attention item of an auth block: which account, and the
// command that fixes it. A refusal that names no account (a token in the
// old connector settings) is fixed by hand and retried.
func authItem(w *storage.Workflow) api.AttentionItem {
	it := api.AttentionItem{Kind: api.AttentionAuth, Workflow: w.Name, ID: w.Name, Reason: w.BlockReason,
		Params: json.RawMessage("null"), CreatedAt: blockedSince(w), Block: w.BlockSeq}
	if name := accounts.NamedIn(w.BlockReason); name != "" {
		it.Title = "sign in to " + name + " again"
		it.Command = accounts.LoginCommand(name)
		it.Answers = []string{}
		return it
	}
	it.Title = w.Name + " was refused its credentials"
	it.Answers = []string{"retry", "resume"}
	return it
}

// hostAccounts maps [connectors.http.hosts] onto their accounts.
func hostAccounts(cfg config.Config, accts *accounts.Store) (map[string]connectors.Account, error) {
	hosts := map[string]connectors.Account{}
	for host, h := range cfg.Connectors.HTTP.Hosts {
		a, err := accts.Account(h.Account)
		if err != nil {
			return nil, fmt.Errorf("connectors.http.hosts.%q: %w", host, err)
		}
		hosts[host] = a
	}
	return hosts, nil
}

// accountTester is a connector that logs in with an account on its own
// (mail: IMAP and SMTP; calendar: a PROPFIND). It returns what it did, or
// nothing when it does not sign in with that account.
type accountTester interface {
	TestAccount(ctx context.Context, account string) ([]string, error)
}

// TestAccount proves an account works now, not only that a secret is
// stored: the secret is at hand (an oauth2 one with a refresh token is
// refreshed), every connector of reg that signs in with the account logs
// in, and every http host holding its credentials is asked its test_url
// (default https://HOST/) with them. It returns what was checked. A
// refused secret is the account's sign-in failure (it names keep auth
// login NAME, and keep auth list then shows the account as needing a
// sign-in); a test that gets in clears such a mark.
func TestAccount(ctx context.Context, cfg config.Config, reg *connectors.Registry, accts *accounts.Store, name string) ([]string, error) {
	def, ok := accts.Def(name)
	if !ok {
		_, err := accts.Account(name)
		return nil, err
	}
	if err := accts.Test(ctx, name); err != nil {
		return nil, err
	}
	var checked []string
	seen := map[connectors.Connector]bool{}
	for _, cn := range reg.Names() {
		c, _ := reg.Get(cn)
		t, ok := c.(accountTester)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		done, err := t.TestAccount(ctx, name)
		checked = append(checked, done...)
		if err != nil {
			return checked, refusedSecret(def, err)
		}
	}
	hosts := make([]string, 0, len(cfg.Connectors.HTTP.Hosts))
	for h := range cfg.Connectors.HTTP.Hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		hh := cfg.Connectors.HTTP.Hosts[h]
		if hh.Account != name {
			continue
		}
		u := hh.TestURL
		if u == "" {
			u = "https://" + h + "/"
		}
		hc, ok := reg.Get("http")
		if !ok {
			break
		}
		res, err := connectors.Do(ctx, hc, connectors.Call{Method: "get", Params: map[string]any{"url": u}}, false)
		if err != nil && hh.TestURL == "" && accounts.AccountOf(err) == "" {
			return checked, fmt.Errorf("%w (set test_url in [connectors.http.hosts.%q] to the address to test the account with)", err, h)
		}
		if err != nil {
			return checked, refusedSecret(def, err)
		}
		status := ""
		if m, ok := res.(map[string]any); ok {
			status = fmt.Sprint(m["status"])
		}
		checked = append(checked, "http: GET "+u+" answered "+status+" with the credentials")
	}
	if len(checked) == 0 {
		return []string{"the " + secretWord(def.Kind) + " is stored, but no connector signs in with " + name + ", so nothing logged in"}, nil
	}
	return checked, accts.Accepted(name)
}

// AccountOf names the account whose secret a service refused in err, or
// is empty when err is no refusal of a secret (a service down, a network
// error): keep auth login tells a refused secret from one it could not check.
func AccountOf(err error) string { return accounts.AccountOf(err) }

// refusedSecret says in words that a service refused the account's secret
// (the sign-in failure itself names the command that fixes it).
func refusedSecret(def accounts.Def, err error) error {
	if accounts.AccountOf(err) != def.Name {
		return err
	}
	return fmt.Errorf("%s: the %s was refused: %w", def.Name, secretWord(def.Kind), err)
}

func secretWord(kind string) string {
	switch kind {
	case accounts.Password, accounts.Basic:
		return "password"
	case accounts.OAuth2:
		return "sign-in"
	}
	return "token"
}

// WaitingOn names the workflows of wfs blocked until the user signs in to
// account again.
func WaitingOn(wfs []api.WorkflowView, account string) []string {
	var out []string
	for _, w := range wfs {
		if w.Block != nil && w.Block.Kind == BlockAuth && accounts.NamedIn(w.Block.Reason) == account {
			out = append(out, w.Name)
		}
	}
	return out
}

// The configured accounts: a connector's own credential keys held by the
// one accounts store, so connectors ask it for them and keep auth list
// shows them.
const (
	SlackAccount = "connectors.slack" // [connectors.slack] token / token_env
	MailAccount  = "connectors.mail"  // [connectors.mail] password / password_env
)

// configuredAccounts defines the configured accounts cfg asks for. Slack's
// is there only while its token is (token_env has a default, and without
// a token the connector posts through its webhook); mail's whenever a
// password is configured for a username and no account is named.
func configuredAccounts(cfg config.Config) []accounts.Def {
	var out []accounts.Def
	s := cfg.Connectors.Slack
	if s.Token != "" || (s.TokenEnv != "" && os.Getenv(s.TokenEnv) != "") {
		out = append(out, accounts.Def{Name: SlackAccount, Kind: accounts.Token, SecretEnv: s.TokenEnv, ConfigSecret: s.Token})
	}
	m := cfg.Connectors.Mail
	if m.Account == "" && m.Username != "" && (m.Password != "" || m.PasswordEnv != "") {
		out = append(out, accounts.Def{Name: MailAccount, Kind: accounts.Password, Username: m.Username,
			SecretEnv: m.PasswordEnv, ConfigSecret: m.Password})
	}
	return out
}

// configuredAccount is the configured account name of cfg, from accts when
// it holds it (OpenAccounts puts them there), else from a store of its own
// (a caller's store made without them); nil when cfg asks for none.
func configuredAccount(accts *accounts.Store, name string, cfg config.Config) (connectors.Account, error) {
	for _, d := range configuredAccounts(cfg) {
		if d.Name != name {
			continue
		}
		if accts != nil {
			if have, ok := accts.Def(name); ok && have.SecretEnv == d.SecretEnv && have.ConfigSecret == d.ConfigSecret &&
				have.Username == d.Username && have.Kind == d.Kind {
				return accts.Account(name)
			}
		}
		own, err := accounts.Open([]accounts.Def{d}, accounts.Opts{})
		if err != nil {
			return nil, err // it names the account (accounts.DefError)
		}
		return own.Account(name)
	}
	return nil, nil
}
