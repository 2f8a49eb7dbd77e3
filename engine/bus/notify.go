package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// summaryMax bounds a notification's text: it is read at a glance in a
// desktop notification or a toast, and the journal holds the full payload.
const summaryMax = 200

// NotifyUser is the built-in notify_user handler: it tells the person about
// the event through notify, which the engine makes a desktop notification
// and a toast in the TUI. The title is the topic; the text is the payload's
// "text" if it has one, else the topic and a short summary of the payload.
func NotifyUser(notify func(title, text string)) Handler {
	if notify == nil {
		panic("bus: NotifyUser with a nil notify function")
	}
	return func(_ context.Context, ev Event) error {
		notify(ev.Topic, notification(ev))
		return nil
	}
}

func notification(ev Event) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(ev.Payload, &obj) == nil {
		var text string
		if json.Unmarshal(obj["text"], &text) == nil && text != "" {
			return truncate(text)
		}
		if len(obj) == 0 {
			return ev.Topic
		}
		parts := make([]string, 0, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			parts = append(parts, k+"="+scalar(obj[k]))
		}
		return truncate(ev.Topic + ": " + strings.Join(parts, ", "))
	}
	if len(bytes.TrimSpace(ev.Payload)) == 0 || string(bytes.TrimSpace(ev.Payload)) == "null" {
		return ev.Topic
	}
	return truncate(ev.Topic + ": " + scalar(ev.Payload))
}

// scalar shows a JSON value the way a person reads it: strings without
// quotes, anything else compact.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String()
	}
	return string(v)
}

func truncate(s string) string {
	if utf8.RuneCountInString(s) <= summaryMax {
		return s
	}
	r := []rune(s)
	return string(r[:summaryMax-1]) + "…"
}
