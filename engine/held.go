package engine

import (
	"context"
	"log/slog"
	"os"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/engine/config"
)

// HeldSecrets is every secret the config gives keep, from the file or the
// environment (the mail password, the Slack token and webhook, the model
// keys), and every secret of the accounts, current on each use. The host
// redacts them from what connectors answer and from every log line.
func HeldSecrets(cfg config.Config, accts *accounts.Store) *connectors.Held {
	h := connectors.NewHeld()
	addHeld(h, cfg, accts)
	return h
}

func addHeld(h *connectors.Held, cfg config.Config, accts *accounts.Store) {
	env := func(name string) string {
		if name == "" {
			return ""
		}
		return os.Getenv(name)
	}
	m, s := cfg.Connectors.Mail, cfg.Connectors.Slack
	for _, v := range []connectors.HeldSecret{
		{User: m.Username, Secret: m.Password},
		{User: m.Username, Secret: env(m.PasswordEnv)},
		{Secret: s.Token},
		{Secret: env(s.TokenEnv)},
		{Secret: s.WebhookURL},
		{Secret: env(cfg.LLM.APIKeyEnv)},
		{Secret: os.Getenv("KEEP_REPAIR_API_KEY")},
	} {
		if v.Secret != "" {
			h.Add(v)
		}
	}
	if accts != nil {
		h.AddSource(accts.Held)
	}
}

// RedactLogs returns a logger whose every line, message and attributes,
// is cleaned of held secrets before it is written.
func RedactLogs(l *slog.Logger, h *connectors.Held) *slog.Logger {
	if h == nil {
		return l
	}
	if r, ok := l.Handler().(redactHandler); ok && r.secrets == h {
		return l
	}
	return slog.New(redactHandler{next: l.Handler(), secrets: h})
}

// redactHandler redacts at the last step before a handler writes: attrs
// added with With are cleaned once, when they are added.
type redactHandler struct {
	next    slog.Handler
	secrets *connectors.Held
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.next.Enabled(ctx, l)
}

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.secrets.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.next.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = r.attr(a)
	}
	return redactHandler{next: r.next.WithAttrs(clean), secrets: r.secrets}
}

func (r redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{next: r.next.WithGroup(name), secrets: r.secrets}
}

// attr cleans one attribute: its text whatever its kind (an error, a
// Stringer, a struct), groups member by member.
func (r redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, m := range g {
			clean[i] = r.attr(m)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindString, slog.KindAny:
		s := v.String()
		if c := r.secrets.Redact(s); c != s {
			return slog.String(a.Key, c)
		}
		return slog.Attr{Key: a.Key, Value: v}
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
