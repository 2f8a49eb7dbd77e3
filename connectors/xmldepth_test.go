package connectors_test

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"keep/connectors"
)

func nested(n int) string {
	return strings.Repeat("<a>", n) + "x" + strings.Repeat("</a>", n)
}

func TestCheckXMLDepth(t *testing.T) {
	t.Parallel()
	const max = 8
	for _, tc := range []struct {
		name string
		doc  string
		deep bool
	}{
		{"elements nested exactly to the bound pass", nested(max), false},
		{"one level past the bound fails", nested(max + 1), true},
		{"elements closed in between do not add up", strings.Repeat(nested(max), 100), false},
		{"empty elements open a level too", strings.Repeat("<a>", max) + "<b/>", true},
		{"a document left open is counted as far as it goes", `<?xml version="1.0"?>` + strings.Repeat("<a>", max+1), true},
		{"a declared charset is read through", `<?xml version="1.0" encoding="ISO-8859-1"?>` + nested(max+1), true},
		{"prefixed names count as any other", strings.Repeat(`<x:a xmlns:x="u">`, max+1), true},
		{"markup in text or CDATA is not an element", "<a>" + strings.Repeat("&lt;a&gt;<![CDATA[<a>]]>", 100) + "</a>", false},
		{"a stray end tag does not make room for more", "<r>" + strings.Repeat("</x>", 4) + strings.Repeat("<a>", max+1), true},
		// gofeed reads without Strict, so neither does the check: an
		// unknown entity or an unquoted attribute does not stop it early
		{"an unknown entity does not end the check", "<r>&nbsp;" + strings.Repeat("<a>", max), true},
		{"an unquoted attribute does not end the check", "<r a=1>" + strings.Repeat("<a>", max), true},
		{"a syntax error ends the check, for the parser to report", "<r><<" + strings.Repeat("<a>", max+1), false},
		{"text that is not XML passes", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := connectors.CheckXMLDepth(strings.NewReader(tc.doc), max)
			var de *connectors.XMLDepthError
			if tc.deep != errors.As(err, &de) || (!tc.deep && err != nil) {
				t.Fatalf("err = %v, want too deep: %v", err, tc.deep)
			}
			if tc.deep && (de.Max != max || !strings.Contains(err.Error(), "more than 8 deep")) {
				t.Fatalf("err = %v, want it to name the bound", err)
			}
		})
	}
}

// The walk hands on what it read, and a caller's own error ends it.
func TestWalkXMLDepth(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	var text []string
	err := connectors.WalkXMLDepth(strings.NewReader("<a>one<b>two</b>three</a>"), 4, func(tok xml.Token) error {
		if cd, ok := tok.(xml.CharData); ok {
			text = append(text, string(cd))
			if string(cd) == "two" {
				return stop
			}
		}
		return nil
	})
	if err != stop || strings.Join(text, ",") != "one,two" {
		t.Fatalf("err = %v, text = %q", err, text)
	}
}
