package sheets

import (
	"strconv"
	"testing"
)

// TestCellLineBreaks: a cell's own line breaks are its value, whatever the
// file's line ends are. A sheet saved by a spreadsheet program on Windows
// ends its records in CRLF and keeps a cell's line break (Alt+Enter) as a
// bare LF; a rewrite must leave both as they were, and a value a script
// writes must read back, in keep and in any other program, as written.
func TestCellLineBreaks(t *testing.T) {
	t.Parallel()

	values := []string{"x\ny", "p\r\nq", "lone\rcr", "end\n"}

	cases := []struct {
		name, file, want string
	}{
		{"On a CRLF sheet a cell's LF stays LF, and the records stay CRLF",
			"name,note\r\nA,\"line1\nline2\"\r\n",
			"name,note,_keep_id\r\nA,\"line1\nline2\",\r\n" +
				"\"x\ny\",," + tag("k0") + "\r\n\"p\r\nq\",," + tag("k1") + "\r\n\"lone\rcr\",," + tag("k2") + "\r\n\"end\n\",," + tag("k3") + "\r\n"},
		{"On an LF sheet a cell's CRLF neither reads as LF nor makes the records CRLF",
			"name,note\nA,\"line1\r\nline2\"\n",
			"name,note,_keep_id\nA,\"line1\r\nline2\",\n" +
				"\"x\ny\",," + tag("k0") + "\n\"p\r\nq\",," + tag("k1") + "\n\"lone\rcr\",," + tag("k2") + "\n\"end\n\",," + tag("k3") + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.write(t, "a.csv", tc.file)
			before := b.mustDo(t, "rows", "", sheet("a.csv"))["rows"].([]any)[0].(map[string]any)["note"].(string)
			for i, v := range values {
				b.mustDo(t, "appendRow", "k"+strconv.Itoa(i), with(sheet("a.csv"), "row", map[string]any{"name": v}))
			}
			if got, want := b.read(t, "a.csv"), tc.want; got != want {
				t.Fatalf("file:\n%q\nwant:\n%q", got, want)
			}
			rows := b.mustDo(t, "rows", "", sheet("a.csv"))["rows"].([]any)
			if got := rows[0].(map[string]any)["note"]; got != before {
				t.Errorf("the untouched cell read %q before the rewrite, %q after", before, got)
			}
			for i, v := range values {
				if got := rows[i+1].(map[string]any)["name"]; got != v {
					t.Errorf("wrote %q, read back %q", v, got)
				}
			}
		})
	}
}
