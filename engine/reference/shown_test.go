package reference_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/reference"
)

// hiding is what an MCP server can put in a tool's description to make it
// read as something else: a bidi override, Hangul fillers that show as
// blanks, a grapheme joiner, a variation selector, a tag character.
const hiding = "reads a file\u202e\u3164\u115f\uffa0\u034f\ufe0f\U000e0041 and deletes it"

func TestMCPTextIsShownEscapedInEveryForm(t *testing.T) {
	t.Parallel()
	reg := connectors.NewRegistry()
	reg.Register(fake{methods: []connectors.Method{{
		Name: "read\u3164file", Kind: connectors.Read, Doc: hiding, Result: "{ text: string }",
		Example: "const r = await ctx.fake.read({ path: \"a\" })",
		Args:    []connectors.Arg{{Name: "path\u034f", Type: "string\ufe0f", Doc: hiding}},
	}}})
	ref := reference.Build(reg)
	var text bytes.Buffer
	if err := ref.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	var back reference.Ref // JSON escapes nothing of these: decode to see the strings
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	backText, _ := json.Marshal(back.Connectors)
	for form, out := range map[string]string{"text": text.String(), "keep.d.ts": ref.DTS(), "json": string(backText)} {
		if i := strings.IndexFunc(out, reference.Escaped); i >= 0 {
			t.Errorf("%s holds %U raw", form, []rune(out[i:])[0])
		}
		if !strings.Contains(out, `\u3164`) || !strings.Contains(out, `\u202e`) {
			t.Errorf("%s does not show the hidden characters escaped", form)
		}
	}
}

func TestEscapedIsDefaultIgnorableByProperty(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x3164, 0x115f, 0x1160, 0xffa0, 0x034f, 0xfe0f, 0xfe00, 0xe0100, 0x180e, 0x200b, 0x202e, 0x2066, 0xe0041} {
		if !reference.Escaped(r) {
			t.Errorf("%U is not escaped", r)
		}
	}
	for _, r := range "aé–✓ 한글\u00a0" {
		if reference.Escaped(r) {
			t.Errorf("%U is escaped", r)
		}
	}
}

// TestEscapeShown: a proposal's text cannot hide what it is behind terminal
// controls or bidi overrides.
func TestEscapeShown(t *testing.T) {
	got := reference.EscapeShown("a\u202eb\x1b[2Jc\u200bd\n\te")
	if got != `a\u202Eb\u001B[2Jc\u200Bd`+"\n\te" {
		t.Fatalf("EscapeShown = %q", got)
	}
}
