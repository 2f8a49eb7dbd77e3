package files

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"keep/connectors"
)

// str returns p[key] if it is a string, else "".
func str(p map[string]any, key string) string {
	s, _ := p[key].(string)
	return s
}

func requiredString(p map[string]any, key string) (string, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return "", connectors.Errorf(connectors.Logic, "missing parameter %q", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", connectors.Errorf(connectors.Logic, "parameter %q must be a string, not %T", key, v)
	}
	if strings.TrimSpace(s) == "" && key != "content" {
		return "", connectors.Errorf(connectors.Logic, "parameter %q is empty", key)
	}
	return s, nil
}

func optionalString(p map[string]any, key, def string) (string, error) {
	if v, ok := p[key]; !ok || v == nil || v == "" {
		return def, nil
	}
	return requiredString(p, key)
}

// content returns the content parameter, held to the size cap.
func (c *Connector) content(p map[string]any) (string, error) {
	s, err := requiredString(p, "content")
	if err != nil {
		return "", err
	}
	if int64(len(s)) > c.maxSize {
		return "", connectors.Errorf(connectors.Logic, "content is %d bytes, more than the %d allowed", len(s), c.maxSize)
	}
	return s, nil
}

// pathAndContent resolves the path parameter and reads the content one, the
// pair every write-like method starts with.
func (c *Connector) pathAndContent(p map[string]any) (target, string, error) {
	t, err := c.resolve(p, "path")
	if err != nil {
		return target{}, "", err
	}
	content, err := c.content(p)
	if err != nil {
		return target{}, "", err
	}
	return t, content, nil
}

// previewContent renders `write notes/a.txt (12 bytes): "first line…"`.
// shownScope is the scope of path as a preview or a check writes it: on
// one line. A file name may hold a newline, and a preview's lines are laid
// out as lines of the host's call, so the script's text after it would
// read as one of them; it is written \n.
func (c *Connector) shownScope(path string) string {
	return strings.ReplaceAll(c.scope(path), "\n", `\n`)
}

func (c *Connector) previewContent(verb string, p map[string]any) string {
	s := str(p, "content")
	first, _, more := strings.Cut(s, "\n")
	if utf8.RuneCountInString(first) > 60 {
		first, more = string([]rune(first)[:60]), true
	}
	if more {
		first += "…"
	}
	return fmt.Sprintf("%s %s (%d bytes): %q", verb, c.shownScope(str(p, "path")), len(s), first)
}
