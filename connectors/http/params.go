package http

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"keep/connectors"
)

// parseURL checks the url parameter: absolute, http or https, and allowed.
func (c *Connector) parseURL(raw any, name string) (*url.URL, error) {
	s, ok := raw.(string)
	if !ok || s == "" {
		return nil, connectors.Errorf(connectors.Logic, "%s must be a non-empty string", name)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s is not a URL: %w", name, connectors.RedactURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, connectors.Errorf(connectors.Logic, "%s %q must be an absolute http or https URL", name, connectors.RedactURL(u))
	}
	if !c.allowed(u) {
		return nil, c.notAllowed(u)
	}
	return u, nil
}

// urlAndHeaders reads the url and headers parameters every method starts with.
func (c *Connector) urlAndHeaders(p map[string]any) (*url.URL, map[string]string, error) {
	u, err := c.parseURL(p["url"], "url")
	if err != nil {
		return nil, nil, err
	}
	hdr, err := headers(p["headers"])
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkOwnAuth(u, hdr); err != nil {
		return nil, nil, err
	}
	return u, hdr, nil
}

// headers reads {name: value} with string values.
func headers(raw any) (map[string]string, error) {
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, connectors.Errorf(connectors.Logic, "headers must be an object of strings, not %T", raw)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, connectors.Errorf(connectors.Logic, "header %q must be a string, not %T", k, v)
		}
		// net/http refuses these too, but with an error like a dropped
		// connection's, which would be retried against a parameter that
		// will not change
		if !token(k) {
			return nil, connectors.Errorf(connectors.Logic, "header name %q is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", k)
		}
		if i := strings.IndexFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }); i >= 0 {
			return nil, connectors.Errorf(connectors.Logic, "header %q holds a control character (%q at byte %d): a line break would start another header", k, s[i], i)
		}
		out[k] = s
	}
	return out, nil
}

// token reports whether s is an HTTP token (RFC 9110 §5.6.2), what a
// header name must be.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

var mutatingMethods = []string{"POST", "PUT", "PATCH", "DELETE"}

func method(raw any) (string, error) {
	s, _ := raw.(string)
	s = strings.ToUpper(s)
	for _, m := range mutatingMethods {
		if s == m {
			return s, nil
		}
	}
	return "", connectors.Errorf(connectors.Logic, "method must be one of %s, not %v", strings.Join(mutatingMethods, ", "), raw)
}

// payload returns the request body and its default content type: json is
// encoded, body is sent as is; not both.
func (c *Connector) payload(p map[string]any) (body []byte, contentType string, err error) {
	j, b := p["json"], p["body"]
	switch {
	case j != nil && b != nil:
		return nil, "", connectors.Errorf(connectors.Logic, "give json or body, not both")
	case j != nil:
		body, err = json.Marshal(j)
		if err != nil {
			return nil, "", connectors.Errorf(connectors.Logic, "json cannot be encoded: %w", err)
		}
		contentType = "application/json"
	case b != nil:
		s, ok := b.(string)
		if !ok {
			return nil, "", connectors.Errorf(connectors.Logic, "body must be a string, not %T", b)
		}
		body = []byte(s)
	}
	if int64(len(body)) > c.maxBody {
		return nil, "", connectors.Errorf(connectors.Logic, "request body is %d bytes, more than the %d allowed", len(body), c.maxBody)
	}
	return body, contentType, nil
}

// previewLimit is about how much of a payload an approval shows.
const previewLimit = 200

// preview renders `POST https://host/path json: {...}`.
func preview(p map[string]any) string {
	m, _ := p["method"].(string)
	line := strings.ToUpper(m) + " " + shownURL(p)
	switch {
	case p["json"] != nil:
		data, err := json.Marshal(p["json"])
		if err != nil {
			return line + " json: (cannot be encoded)"
		}
		return line + " json: " + clip(string(data), previewLimit)
	case p["body"] != nil:
		return line + " body: " + clip(fmt.Sprint(p["body"]), previewLimit)
	}
	return line
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
