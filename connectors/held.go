package connectors

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
)

// Redacted is what a held secret is replaced with.
const Redacted = "[redacted]"

// minHeld is the shortest value redacted: shorter strings are everywhere
// in ordinary text, and replacing them would wreck every result.
const minHeld = 4

// HeldSecret is one secret the host holds and the login name it travels
// with (for the encodings that carry both).
type HeldSecret struct {
	User   string
	Secret string
}

// Held is every secret the host holds: passwords, tokens, client secrets,
// env secrets. Whatever a connector hands back (a result, an error) and
// every log line pass through it, so a server that echoes a credential
// cannot make the host store or show it. Sources are asked on each use:
// an OAuth token refreshed a minute ago is held too.
type Held struct {
	mu      sync.Mutex
	static  []HeldSecret
	sources []func() []HeldSecret
	// past keeps what sources listed before: a token replaced by a
	// refresh may still come back in an answer.
	past []HeldSecret
}

// maxPast bounds past: one entry per refresh, so a year of refreshes
// cannot grow it without end.
const maxPast = 64

// NewHeld returns an empty set.
func NewHeld() *Held { return &Held{} }

// Add holds fixed secrets (from the config or the environment).
func (h *Held) Add(s ...HeldSecret) {
	h.mu.Lock()
	h.static = append(h.static, s...)
	h.mu.Unlock()
}

// AddSource holds whatever f lists, asked again on every use.
func (h *Held) AddSource(f func() []HeldSecret) {
	h.mu.Lock()
	h.sources = append(h.sources, f)
	h.mu.Unlock()
}

// forms lists every held secret in the encodings it travels in on the wire
// or comes back in: clear, base64, Basic and SASL PLAIN/XOAUTH2 blobs,
// URL- and JSON-escaped; and in what a script can make of one a server
// echoed back in pieces: reversed, base64 (standard and URL, padded or
// not), hex, encodeURIComponent. Longest first, so a form is replaced
// before a shorter one inside it.
func (h *Held) forms() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	sources := h.sources
	h.mu.Unlock()
	var fresh []HeldSecret
	for _, f := range sources {
		fresh = append(fresh, f()...)
	}
	h.mu.Lock()
	for _, s := range fresh {
		if !containsHeld(h.past, s) {
			h.past = append(h.past, s)
		}
	}
	if n := len(h.past); n > maxPast {
		h.past = append([]HeldSecret(nil), h.past[n-maxPast:]...)
	}
	all := append(append([]HeldSecret(nil), h.static...), h.past...)
	h.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if len(f) >= minHeld && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	b64 := base64.StdEncoding.EncodeToString
	for _, s := range all {
		if len(s.Secret) < minHeld {
			continue
		}
		add(s.Secret)
		add(b64([]byte(s.Secret)))
		add(url.QueryEscape(s.Secret))
		add(url.PathEscape(s.Secret))
		if j, err := json.Marshal(s.Secret); err == nil {
			add(string(j[1 : len(j)-1]))
		}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s.Secret)))
		}
		add(reversed(s.Secret))
		add(hex.EncodeToString([]byte(s.Secret)))
		add(strings.ToUpper(hex.EncodeToString([]byte(s.Secret))))
		add(uriComponent(s.Secret))
		add(b64([]byte(s.User + ":" + s.Secret)))
		add(b64([]byte("\x00" + s.User + "\x00" + s.Secret)))
		add(b64([]byte("user=" + s.User + "\x01auth=Bearer " + s.Secret + "\x01\x01")))
	}
	// longest first: a base64 blob may contain a shorter secret's form
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// reversed is s backwards, rune by rune (what "…".split("").reverse()
// makes of ASCII, and Array.from(…).reverse() of the rest).
func reversed(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// uriComponent is JavaScript's encodeURIComponent: every byte escaped in
// upper-case hex but letters, digits and -_.!~*'().
func uriComponent(s string) string {
	const keep = "-_.!~*'()"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Redactor is Redact with the held forms taken once: for many strings
// cleaned at one moment (a run's trace as it is recorded).
func (h *Held) Redactor() func(string) string {
	forms := h.forms()
	return func(s string) string { return redactWith(forms, s) }
}

// Redact returns s with every held secret replaced by [redacted].
func (h *Held) Redact(s string) string {
	return redactWith(h.forms(), s)
}

func redactWith(forms []string, s string) string {
	for _, f := range forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, Redacted)
		}
	}
	return s
}

// Scrub is the one place a connector's answer is cleaned before the host
// keeps or hands it on: every string in res (map keys and values, lists,
// nested) and err's message. What holds no secret is returned as it is;
// err keeps its class and chain.
func (h *Held) Scrub(res any, err error) (any, error) {
	forms := h.forms()
	if len(forms) == 0 {
		return res, err
	}
	res, _ = scrubValue(forms, res)
	if err != nil {
		err = scrubError(forms, err)
	}
	return res, err
}

// ScrubError is Scrub for an error alone.
func (h *Held) ScrubError(err error) error {
	forms := h.forms()
	if len(forms) == 0 || err == nil {
		return err
	}
	return scrubError(forms, err)
}

func scrubError(forms []string, err error) error {
	msg := err.Error()
	clean := redactWith(forms, msg)
	if clean == msg {
		return err
	}
	var ce *Error
	if errors.As(err, &ce) && ce == err {
		// keep the class and hints at the top, where the host reads them
		inner := ce.Err.Error()
		out := *ce
		out.Err = &redactedError{msg: redactWith(forms, inner), err: ce.Err}
		return &out
	}
	return &redactedError{msg: clean, err: err}
}

// redactedError shows a message cleaned of secrets; errors.As and Is
// still see the failure under it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// scrubValue copies v only where it held a secret; changed says whether
// it did.
func scrubValue(forms []string, v any) (out any, changed bool) {
	switch x := v.(type) {
	case string:
		s := redactWith(forms, x)
		return s, s != x
	case []byte:
		s := redactWith(forms, string(x))
		if s == string(x) {
			return x, false
		}
		return []byte(s), true
	case json.RawMessage:
		s := redactWith(forms, string(x))
		if s == string(x) {
			return x, false
		}
		return json.RawMessage(s), true
	case map[string]any:
		return scrubMap(forms, x, func(e any) (any, bool) { return scrubValue(forms, e) })
	case map[string]string:
		return scrubMap(forms, x, func(e string) (string, bool) {
			c := redactWith(forms, e)
			return c, c != e
		})
	case []any:
		var l []any
		for i, e := range x {
			if ce, ch := scrubValue(forms, e); ch {
				if l == nil {
					l = append([]any(nil), x...)
				}
				l[i] = ce
			}
		}
		if l == nil {
			return x, false
		}
		return l, true
	case []string:
		var l []string
		for i, e := range x {
			if ce := redactWith(forms, e); ce != e {
				if l == nil {
					l = append([]string(nil), x...)
				}
				l[i] = ce
			}
		}
		if l == nil {
			return x, false
		}
		return l, true
	case nil, bool, int, int64, float64:
		return v, false
	default:
		// a connector's own type (a struct, a list of them): through
		// JSON, which is how the host stores and hands it on anyway
		b, err := json.Marshal(x)
		if err != nil {
			return v, false
		}
		s := redactWith(forms, string(b))
		if s == string(b) {
			return v, false
		}
		var back any
		if json.Unmarshal([]byte(s), &back) != nil {
			return Redacted, true
		}
		return back, true
	}
}

func containsHeld(l []HeldSecret, s HeldSecret) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// scrubMap redacts a map's keys and values, copying it only when
// something changed.
func scrubMap[V any](forms []string, x map[string]V, scrub func(V) (V, bool)) (map[string]V, bool) {
	var m map[string]V
	for k, e := range x {
		ck := redactWith(forms, k)
		ce, ch := scrub(e)
		if ck == k && !ch {
			continue
		}
		if m == nil {
			m = maps.Clone(x)
		}
		delete(m, k)
		m[ck] = ce
	}
	if m == nil {
		return x, false
	}
	return m, true
}
