package printable_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
}

func TestShownJSONDecodesToWhatStringShows(t *testing.T) {
	t.Parallel()
	enc, err := json.Marshal(map[string]any{"title": planted, "n": 1, "list": []string{"\b\f\r", `back\slash \u001b`}})
	if err != nil {
		t.Fatal(err)
	}
	got := printable.ShownJSON(enc)
	var back struct {
		Title string
		N     int
		List  []string
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, got)
	}
	if back.Title != printable.String(planted) || back.N != 1 || back.List[0] != `\x08\x0c\x0d` || back.List[1] != `back\slash \u001b` {
		t.Fatalf("decoded %+v", back)
	}
}
