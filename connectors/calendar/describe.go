package calendar

import (
	"fmt"
	"strings"
)

// What people see of a mutation: the approval prompt, the ledger, and the
// manual check for an outcome nobody could determine.

func text(p map[string]any, name string) string {
	s, _ := p[name].(string)
	return s
}

// span renders start–end as given.
func span(p map[string]any) string {
	s, e := text(p, "start"), text(p, "end")
	if e == "" {
		return s
	}
	return s + " – " + e
}

func previewCreate(p map[string]any) string {
	line := fmt.Sprintf("create %q %s", text(p, "summary"), span(p))
	if loc := text(p, "location"); loc != "" {
		line += " at " + loc
	}
	return line
}

func previewUpdate(p map[string]any) string {
	var set []string
	for _, name := range []string{"summary", "start", "end", "location", "description"} {
		if v, ok := p[name]; ok {
			set = append(set, fmt.Sprintf("%s=%q", name, fmt.Sprint(v)))
		}
	}
	return fmt.Sprintf("update event %s: %s", text(p, "uid"), strings.Join(set, ", "))
}

func previewDelete(p map[string]any) string {
	return "delete event " + text(p, "uid")
}

func (c *Connector) checkCreate(p map[string]any) string {
	return fmt.Sprintf("open the calendar %s and look for %q at %s", c.scope(p), text(p, "summary"), text(p, "start"))
}

func (c *Connector) checkUpdate(p map[string]any) string {
	return fmt.Sprintf("open the calendar %s and look whether the event %s shows: %s", c.scope(p), text(p, "uid"), previewUpdate(p))
}

func (c *Connector) checkDelete(p map[string]any) string {
	return fmt.Sprintf("open the calendar %s and look whether the event %s is gone", c.scope(p), text(p, "uid"))
}
