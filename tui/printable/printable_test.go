package printable_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"keep/engine/reference"
	"keep/tui/printable"
)

// planted is what a hostile script writes into a title or a log line:
// clear the screen, set the window title, write the clipboard, ring the
// bell, move the cursor up and erase the line, and a C1 CSI.
const planted = "a\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[1A\x1b[2K\u009b31m\x7f\r\x00b\nc\td"

func hasControl(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return true
		}
	}
	return false
}

func TestString(t *testing.T) {
	t.Parallel()
	got := printable.String(planted)
	if hasControl(got) {
		t.Fatalf("String left a control character: %q", got)
	}
	want := `a\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[1A\x1b[2K\u009b31m\x7f\x0d\x00b` + "\nc\td"
	if got != want {
		t.Fatalf("String = %q\nwant     %q", got, want)
	}
	if s := "plain – text ✓ \uFFFD"; printable.String(s) != s {
		t.Errorf("String changed clean text: %q", printable.String(s))
	}
	if got := printable.String("\xff\x9b"); got != `\xff\x9b` {
		t.Errorf("bytes that are not UTF-8 = %q", got)
	}
}

func TestWriterHoldsASplitRuneUntilWhole(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := printable.NewWriter(&out)
	c1 := []byte("\u009b") // two bytes: C2 9B
	for _, p := range [][]byte{[]byte("x\x1b"), c1[:1], c1[1:], []byte("é"[:1]), []byte("é"[1:]), {0xe2}} {
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `x\x1b\u009bé\xe2` {
		t.Fatalf("written %q", got)
	}
}

func TestJSONStaysValidAndInert(t *testing.T) {
	t.Parallel()
	enc, err := json.Marshal(map[string]string{"title": planted})
	if err != nil {
		t.Fatal(err)
	}
	got := printable.JSON(enc)
	if hasControl(string(got)) {
		t.Fatalf("JSON left a control character: %q", got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["title"] != planted {
		t.Fatalf("JSON changed the value: %v %q", err, back["title"])
	}
}

func TestDeep(t *testing.T) {
	t.Parallel()
	type inner struct {
		Name string
		Tags []string
	}
	type view struct {
		Title   string
		Payload json.RawMessage
		Ptr     *inner
		ByName  map[string]inner
		Any     any
		secret  string
		Bytes   []byte
	}
	v := view{Title: planted, Payload: json.RawMessage(`{"a":"` + "\u009b" + `"}`), Ptr: &inner{Name: planted, Tags: []string{planted}},
		ByName: map[string]inner{planted: {Name: planted}}, Any: planted, secret: planted, Bytes: []byte(planted)}
	printable.Deep(&v)
	all, _ := json.Marshal(struct {
		V view
		I inner
	}{v, *v.Ptr})
	for _, s := range []string{v.Title, string(v.Payload), v.Ptr.Name, v.Ptr.Tags[0], v.Any.(string)} {
		if hasControl(s) {
			t.Errorf("Deep left %q", s)
		}
	}
	for k, e := range v.ByName {
		if hasControl(k) || hasControl(e.Name) {
			t.Errorf("Deep left a map entry %q: %q", k, e.Name)
		}
	}
	if !json.Valid(v.Payload) {
		t.Errorf("payload is no longer JSON: %s", v.Payload)
	}
	if v.secret != planted || !bytes.Equal(v.Bytes, []byte(planted)) {
		t.Error("Deep touched an unexported field or raw bytes")
	}
	if !strings.Contains(string(all), `\\x1b[2J`) {
		t.Errorf("escaped text missing: %s", all)
	}
	// JSON stays JSON, escaped as JSON escapes: shown as JSON text it
	// reads \u009b, once, and decodes to what it was
	if string(v.Payload) != `{"a":"\u009b"}` {
		t.Errorf("payload = %s, want it escaped once, as JSON", v.Payload)
	}
}

// disguise is what a hostile script writes to make text read as something
// it is not: every bidi embedding, override and isolate, the zero-width
// characters and marks, the Arabic letter mark, a BOM, the line and
// paragraph separators, a soft hyphen and a tag character (U+E0041, which
// smuggles an invisible "A").
const disguise = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u200e\u200f\u061c\ufeff\u2028\u2029\u00ad\U000E0041"

// invisible lists the format characters and separators left in s.
func invisible(s string) []string {
	var out []string
	for _, r := range s {
		if strings.ContainsRune(disguise, r) || unicode.Is(unicode.Cf, r) {
			out = append(out, fmt.Sprintf("%U", r))
		}
	}
	return out
}

func TestFormatCharactersAreShownEscaped(t *testing.T) {
	t.Parallel()
	in := "pay " + disguise + " bob"
	got := printable.String(in)
	want := `pay \u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u200e\u200f\u061c\ufeff\u2028\u2029\u00ad\U000e0041 bob`
	if got != want {
		t.Fatalf("String = %q\nwant     %q", got, want)
	}
	var out bytes.Buffer
	w := printable.NewWriter(&out)
	for _, b := range []byte(in) { // one byte at a time: every rune split
		if _, err := w.Write([]byte{b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("Writer wrote %q", out.String())
	}
	for _, s := range []string{"émoji 👍🏽 – naïve ✓", "日本語", "עברית", "العربية"} {
		if printable.String(s) != s {
			t.Errorf("String changed visible text %q to %q", s, printable.String(s))
		}
	}
}

func TestJSONEscapesFormatCharactersAndKeepsTheValue(t *testing.T) {
	t.Parallel()
	enc, err := json.Marshal(map[string]string{"title": disguise})
	if err != nil {
		t.Fatal(err)
	}
	got := printable.JSON(enc)
	if inv := invisible(string(got)); len(inv) > 0 {
		t.Fatalf("JSON left %v raw: %q", inv, got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["title"] != disguise {
		t.Fatalf("JSON changed the value: %v %q", err, back["title"])
	}
}

func TestDeepEscapesFormatCharacters(t *testing.T) {
	t.Parallel()
	v := struct {
		Title  string
		Params json.RawMessage
	}{Title: "approve " + disguise, Params: json.RawMessage(`{"to":"` + disguise + `"}`)}
	printable.Deep(&v)
	if inv := invisible(v.Title + string(v.Params)); len(inv) > 0 {
		t.Fatalf("Deep left %v: %q %s", inv, v.Title, v.Params)
	}
}

func TestInvisibleCharactersAreEscapedByProperty(t *testing.T) {
	t.Parallel()
	// The red team's fillers: each reads as a blank or nothing and hid a
	// word of an approval.
	for _, r := range []rune{0x3164, 0x115f, 0x1160, 0xffa0, 0x034f, 0xfe0f, 0xfe00, 0xe0100, 0x180e, 0x2064} {
		s := "to:" + string(r) + "x"
		if got := printable.String(s); got == s || !strings.Contains(got, fmt.Sprintf("%04x", r)) {
			t.Errorf("%U: String = %q", r, got)
		}
	}
	if s := "한글 ❤ e\u0301"; printable.String(s) != s {
		t.Errorf("String changed visible text: %q", printable.String(s))
	}
}

// The engine's reference (keep.d.ts, the MCP reference) escapes by its own
// copy of the rule, since the engine knows nothing of the TUI: the two must
// agree on every code point.
func TestReferenceEscapesWhatPrintableEscapes(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		if p, e := printable.String(s) != s, reference.Escaped(r); p != e {
			t.Errorf("%U: printable escapes it: %v, the reference: %v", r, p, e)
		}
	}
}

// TestDeepWritesOnlyWhatNeedsEscaping: a view may share what it reaches
// with other readers (the engine's maps of arguments), so a view with
// nothing to escape is left as it was, not written back the same; what
// needs escaping is still escaped.
func TestDeepWritesOnlyWhatNeedsEscaping(t *testing.T) {
	type view struct {
		Args map[string]any
		Any  any
	}
	args := map[string]any{"to": "me@example.com"}
	inner := map[string]any{"n": 1.0}
	v := view{Args: args, Any: inner}
	printable.Deep(&v)
	if reflect.ValueOf(v.Args).UnsafePointer() != reflect.ValueOf(args).UnsafePointer() ||
		reflect.ValueOf(v.Any).UnsafePointer() != reflect.ValueOf(inner).UnsafePointer() {
		t.Errorf("a view with nothing to escape was written over: its maps were replaced")
	}
	dirty := view{Args: map[string]any{"to": "a\x1bb"}, Any: map[string]any{"k\x07": "v"}}
	printable.Deep(&dirty)
	if dirty.Args["to"] != `a\x1bb` || dirty.Any.(map[string]any)[`k\x07`] != "v" {
		t.Errorf("what needed escaping: %#v", dirty)
	}
}

// Line is String on one line: a newline and a tab are shown, not obeyed.
func TestLineKeepsTextOnOneLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a.txt":               "a.txt",
		"a\nFORGED\tx":        `a\nFORGED\tx`,
		"a\r\n\x1b[2J\u202eb": `a\x0d\n\x1b[2J\u202eb`,
	} {
		if got := printable.Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
