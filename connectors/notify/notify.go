// Package notify is the desktop notification connector: one mutation,
// send, delivered through notify-send and through a sink the host provides
// (an open TUI's bell and toast).
//
// It has no Reconciler: nothing records whether a person saw a
// notification, so an uncertain send goes straight to the user (DESIGN §6).
package notify

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"keep/connectors"
)

// Config configures the notify connector. Zero values take the defaults.
type Config struct {
	// Command is the notifier, run as `Command --app-name=keep -- TITLE
	// [BODY]`. A bare name is looked up on PATH at each send, so a notifier
	// installed after start-up is found. Default: "notify-send".
	Command string
	// Sink, if set, is handed every notification (keep's: the TUI's bell
	// and toast) and says whether someone took it, so a user without a
	// desktop notifier still hears from keep, and one without either is
	// not told it was delivered.
	Sink func(title, body string) bool
}

// Connector sends notifications.
type Connector struct {
	command string
	sink    func(title, body string) bool
}

var _ connectors.Connector = (*Connector)(nil)

// Limits keep a runaway script from flooding the desktop with a novel.
const (
	maxTitle = 200
	maxBody  = 4000
)

// New returns a notify connector.
func New(cfg Config) (*Connector, error) {
	if cfg.Command == "" {
		cfg.Command = "notify-send"
	}
	return &Connector{command: cfg.Command, sink: cfg.Sink}, nil
}

// Name is "notify".
func (c *Connector) Name() string { return "notify" }

// Methods lists send, a mutation without a scope.
func (c *Connector) Methods() []connectors.Method {
	return []connectors.Method{{
		Name:    "send",
		Kind:    connectors.Mutate,
		Scope:   func(map[string]any) string { return "" },
		Preview: preview,
		Check: func(p map[string]any) string {
			title, _ := p["title"].(string)
			return fmt.Sprintf("look in your desktop notifications for %q", title)
		},
		Doc: "Shows a desktop notification through notify-send, and in keep's TUI, if one is open, rings the terminal bell and shows it as a toast; with neither notify-send nor an open TUI the call fails (a logic error naming notify-send) and its run waits in Attention.",
		Args: []connectors.Arg{
			{Name: "title", Type: "string", Required: true},
			{Name: "body", Type: "string"},
		},
		Result:    `{ delivered: true, via: "notify-send" | "tui" }`,
		Reconcile: "none: a notification leaves no trace to look for, so an uncertain one is put to you",
		Example:   `await ctx.notify.send({ title: "Big file", body: prepared.data.path })`,
	}}
}

func preview(p map[string]any) string {
	title, _ := p["title"].(string)
	body, _ := p["body"].(string)
	if body == "" {
		return fmt.Sprintf("notify %q", title)
	}
	return fmt.Sprintf("notify %q: %q", title, clip(body, 80))
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Do performs send: {title, body} → {delivered: true, via}.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	if call.Method != "send" {
		return nil, connectors.Errorf(connectors.Logic, "notify has no method %q (it has: send)", call.Method)
	}
	title, body, err := params(call.Params)
	if err != nil {
		return nil, err
	}
	shown := c.sink != nil && c.sink(title, body)
	path, lookErr := exec.LookPath(c.command)
	if lookErr == nil {
		err := c.run(ctx, path, title, body)
		if err == nil {
			return map[string]any{"delivered": true, "via": "notify-send"}, nil
		}
		if !shown {
			return nil, err
		}
		// the desktop did not show it, the TUI did: sent again, the bell
		// would ring twice for one notification
	}
	if shown {
		return map[string]any{"delivered": true, "via": "tui"}, nil
	}
	// A silent "delivered: false" would hide from the user that they will
	// never be notified; a logic error tells them once.
	return nil, connectors.Errorf(connectors.Logic, "no desktop notifier (%s not found) and no keep TUI open to show it", c.command)
}

func params(p map[string]any) (title, body string, err error) {
	title, ok := p["title"].(string)
	if !ok || strings.TrimSpace(title) == "" {
		return "", "", connectors.Errorf(connectors.Logic, "send needs a title (a non-empty string)")
	}
	if v, present := p["body"]; present && v != nil {
		if body, ok = v.(string); !ok {
			return "", "", connectors.Errorf(connectors.Logic, "send: body must be a string, not %T", v)
		}
	}
	if utf8.RuneCountInString(title) > maxTitle || utf8.RuneCountInString(body) > maxBody {
		return "", "", connectors.Errorf(connectors.Logic, "send: title is limited to %d characters and body to %d", maxTitle, maxBody)
	}
	return title, body, nil
}

// DesktopText is s as the desktop is handed it: what keep never writes
// raw on a terminal is written escaped here too (`\x1b`, `\u202e`), by the
// rule of tui/printable (its tests hold the two equal): a control
// character, a line or paragraph separator, and every invisible character
// by Unicode property (format characters such as bidi overrides and
// zero-width spaces, default-ignorable code points). A notification
// arrives outside keep, with nothing beside it to say what it is: a script
// must not make it read as something else, nor reach the terminal a
// notifier may log it to.
func DesktopText(s string) string {
	if !strings.ContainsFunc(s, unshown) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unshown(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unshown(r rune) bool {
	if r < 0x80 {
		return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f
	}
	return r <= 0x9f || r == '\u2028' || r == '\u2029' ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// desktopMarkup escapes what a notification server reads as markup in a
// body (the freedesktop spec's <b>, <a href>, <img src>): a script's body
// is shown as the text it is, never as a link dressed as other words or
// an image loaded from a path it names.
var desktopMarkup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func (c *Connector) run(ctx context.Context, path, title, body string) error {
	// "--" keeps a title starting with "-" from being read as an option.
	args := []string{"--app-name=keep", "--", DesktopText(title)}
	if body != "" {
		args = append(args, desktopMarkup.Replace(DesktopText(body)))
	}
	if err := ctx.Err(); err != nil {
		// Not started: certainly not shown.
		return connectors.Errorf(connectors.Transient, "%s not started: %w", c.command, err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	// A notifier that leaves a child holding its output open must not hold
	// the call past the deadline.
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Killed at the deadline: the notifier may already have shown it.
		return connectors.Errorf(connectors.Uncertain, "%s interrupted: %w", c.command, ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		// notify-send fails before showing anything (no session bus, no
		// notification daemon yet); a later attempt may find one.
		return connectors.Errorf(connectors.Transient, "%s exited with %d: %s", c.command, exit.ExitCode(), clip(strings.TrimSpace(string(out)), 200))
	}
	return connectors.Errorf(connectors.Transient, "run %s: %w", c.command, err)
}
