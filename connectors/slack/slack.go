// Package slack is the Slack connector: it reads a channel's history and
// posts messages through the Web API (chat.postMessage) or an incoming
// webhook. A post carries a tag of the mutation's idempotency key (postTag)
// in Slack message metadata, so reconciliation can look for it in the
// channel's history.
//
// The token and the webhook URL are credentials: they are sent to Slack and
// nowhere else, never in a result or an error.
package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"keep/connectors"
)

// Defaults for Config's zero values.
const (
	DefaultAPIBase = "https://slack.com/api"
	DefaultTimeout = 30 * time.Second
)

// Config configures the connector.
type Config struct {
	// APIBase is the Web API's base URL. Default "https://slack.com/api".
	APIBase string
	// Account holds the bot or user token: the host's configured account
	// for [connectors.slack] token / token_env. Nil and no Token: only
	// webhook posts work.
	Account connectors.Account
	// Token is a token given as it is, when Account is nil.
	Token string
	// WebhookURL is an optional incoming webhook, used by post when asked
	// (webhook: true) or when there is no token.
	WebhookURL string
	// Client sends the requests. Default: a new client with the default
	// transport. Its own Timeout, if any, applies on top of Timeout.
	Client *http.Client
	// Timeout bounds each call to Slack. Default 30s.
	Timeout time.Duration
}

// Connector is the Slack connector. It is safe for concurrent use.
type Connector struct {
	apiBase string
	account connectors.Account // the token; nil: none
	webhook string
	client  *http.Client
	timeout time.Duration
	// KeyTags keys the tags posts carry (postTag).
	connectors.KeyTags
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a connector for cfg, filling in the defaults.
func New(cfg Config) (*Connector, error) {
	c := &Connector{
		apiBase: strings.TrimRight(cfg.APIBase, "/"),
		account: cfg.Account,
		webhook: cfg.WebhookURL,
		client:  cfg.Client,
		timeout: cfg.Timeout,
	}
	if c.account == nil && cfg.Token != "" {
		c.account = givenToken(cfg.Token)
	}
	if c.apiBase == "" {
		c.apiBase = DefaultAPIBase
	}
	if err := checkURL(c.apiBase); err != nil {
		return nil, fmt.Errorf("slack: api_base %q: %w", c.apiBase, err)
	}
	if c.webhook != "" {
		// Don't quote the webhook URL: its path is a secret.
		if err := checkURL(c.webhook); err != nil {
			return nil, fmt.Errorf("slack: webhook URL: %w", err)
		}
	}
	if c.client == nil {
		c.client = &http.Client{Transport: connectors.NewHTTPTransport()}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return errors.New("not an http(s) URL")
	}
	return nil
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return "slack" }

// InputTypes implements connectors.InputSource.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"slack": {"message", "reaction"}}
}

// Methods implements connectors.Connector.
func (c *Connector) Methods() []connectors.Method {
	return []connectors.Method{
		{Name: "history", Kind: connectors.Read,
			Doc: "Reads one page of a channel's messages, newest first (conversations.history); pass next_cursor back as cursor for the next, older page.",
			Args: []connectors.Arg{
				{Name: "channel", Type: "string", Required: true, Doc: "a channel ID (C0123…)"},
				{Name: "oldest", Type: "string", Doc: "only messages after this ts"},
				{Name: "limit", Type: "number", Doc: "page size, 1-1000 (default 100)"},
				{Name: "cursor", Type: "string", Doc: "next_cursor of the previous page"},
			},
			Result: "{ messages: Array<{ ts: string, user: string, text: string, thread_ts: string, metadata: any }>, " +
				"has_more: boolean, next_cursor: string }",
			Example: `const { messages } = await ctx.slack.history({ channel: "C0123456789", oldest: state?.ts })`},
		{Name: "post", Kind: connectors.Mutate, Scope: scopePost, Preview: previewPost, Check: checkPost,
			Doc: "Posts a message (chat.postMessage with the host's key in its metadata), or through the incoming webhook " +
				`when asked or when no token is configured (then ts is "").`,
			Args: []connectors.Arg{
				{Name: "channel", Type: "string", Doc: `a channel ID or "#name" (the Web API needs it)`},
				{Name: "text", Type: "string", Doc: "the message; or blocks"},
				{Name: "thread_ts", Type: "string", Doc: "reply in this thread"},
				{Name: "blocks", Type: "any[]", Doc: "Block Kit blocks"},
				{Name: "webhook", Type: "boolean", Doc: "post through [connectors.slack] webhook_url"},
			},
			Result: "{ channel: string, ts: string }",
			Reconcile: "searches the channel's recent history (or the thread) for a message whose metadata carries the " +
				"mutation's key, signed with a secret of keep's; a webhook post cannot be checked and is put to you",
			Example: `await ctx.slack.post({ channel: "#inbox-digest", text: prepared.data.text })`},
	}
}

// Do implements connectors.Connector.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	switch call.Method {
	case "history":
		return c.history(ctx, call.Params)
	case "post":
		return c.post(ctx, call)
	}
	return nil, connectors.Errorf(connectors.Logic, "slack has no method %q", call.Method)
}
