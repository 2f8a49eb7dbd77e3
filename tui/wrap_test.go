package tui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"keep/engine"
	"keep/engine/api"
)

// A JSON value is broken only after a "," or ":" (its continuation lines
// hanging), words only between them, and every character kept: in the
// TUI's traces and cards and in `keep mutations` and `keep attention`.

// longResult is a result no 80-column line holds, whose pieces the old
// cell-count wrap cut in the middle.
const longResult = `{"messageId":"<20261128.alice.invoice-december@mail.example.com>","threadId":"thread-000123456789","labels":["INBOX","UNREAD"],"sizeEstimate":48213}`

// longList is an argument value (a list of plain values is one value)
// longer than a card's line.
const longList = `["<alice.invoice-december@mail.example.com>","<bob.lunch-on-friday@mail.example.com>","<carol.quarterly-report@mail.example.com>"]`

// jsonPieces is s split after each "," and ":": what a line may not cut.
func jsonPieces(s string) []string { return boundaryPieces(s) }

// wholePieces fails unless every piece of value is whole on one of lines.
func wholePieces(t *testing.T, where, value string, lines []string) {
	t.Helper()
	for _, p := range jsonPieces(value) {
		found := false
		for _, l := range lines {
			if strings.Contains(l, p) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: %q is cut across lines:\n%s", where, p, strings.Join(lines, "\n"))
		}
	}
}

func TestWrapKeepsTokensWhole(t *testing.T) {
	t.Parallel()

	t.Run("breakLines breaks JSON only after , and :, hangs the rest and keeps every character", func(t *testing.T) {
		t.Parallel()
		for _, w := range []int{20, 33, 47, 60, 70, 79} {
			// every piece fits from 55 cells on: narrower, only a piece
			// longer than the line is cut
			s := "→ " + longResult + " and then some words"
			lines := breakLines(s, w)
			var joined strings.Builder
			for i, l := range lines {
				if cw := ansi.StringWidth(l); cw > w {
					t.Fatalf("w %d: line %d is %d cells: %q", w, i, cw, l)
				}
				joined.WriteString(l)
			}
			flat := strings.ReplaceAll(joined.String(), " ", "")
			if flat != strings.ReplaceAll(s, " ", "") {
				t.Fatalf("w %d: characters lost or added:\n%s", w, strings.Join(lines, "\n"))
			}
			if w >= 55 {
				wholePieces(t, "breakLines", longResult, lines)
			}
			for i, l := range lines[1:] {
				if strings.Contains(lines[i], `"messageId"`) && !strings.HasPrefix(l, hang) {
					t.Fatalf("w %d: the value's next line does not hang: %q", w, l)
				}
			}
		}
	})

	t.Run("words are not cut, a word wider than the line is cut only where nothing else fits", func(t *testing.T) {
		t.Parallel()
		got := breakLines("approve the invoice from alice", 12)
		want := []string{"approve the", "invoice from", "alice"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("got %q, want %q", got, want)
		}
		got = breakLines("abcdefghijklmnopqrstuvwxyz", 10)
		if strings.Join(got, "") != "abcdefghij  klmnopqr  stuvwxyz" {
			t.Fatalf("an unbreakable word: %q", got)
		}
	})

	t.Run("a trace's result in the Run log at 80x24", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		tr := append([]api.TraceLine(nil), apiHost.traces["12"]...)
		tr[0].Result = longResult
		apiHost.traces["14"] = tr // the run selected first
		h := newHarness(t, apiHost, 80, 24)
		h.keys("4", "enter")
		screen := h.screen()
		if !strings.Contains(screen, "mail.fetch") {
			t.Fatalf("no trace:\n%s", screen)
		}
		// three lines at most: the pieces up to the cut, each whole
		shown := strings.Join(jsonPieces(longResult)[:7], "")
		wholePieces(t, "the trace", shown, strings.Split(screen, "\n"))
	})

	t.Run("an approval's argument value on its card at 80x24", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		api.attention[0].Params = json.RawMessage(`{"ids":` + longList + `}`)
		h := newHarness(t, api, 80, 24)
		h.keys("3", "enter")
		screen := h.screen()
		wholePieces(t, "the card", longList, strings.Split(screen, "\n"))
	})

	t.Run("keep mutations: the result whole at its boundaries, < and > as themselves", func(t *testing.T) {
		t.Parallel()
		// what the ledger holds: Go's encoder wrote < and > as \u003c, \u003e
		stored, _ := json.Marshal(json.RawMessage(longResult))
		if !bytes.Contains(stored, []byte(`\u003c`)) {
			t.Fatalf("the fixture is not escaped: %s", stored)
		}
		var b bytes.Buffer
		ms := []api.MutationView{{ID: "m1", Status: engine.MutationApplied, RunID: "4", Connector: "mail", Method: "send",
			Params: json.RawMessage(`{"to":"<a@example.com>"}`), Result: stored}}
		if err := WriteMutations(&b, ms, 80); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u003e`) {
			t.Fatalf("< or > escaped:\n%s", out)
		}
		wholePieces(t, "keep mutations", longResult, strings.Split(out, "\n"))
		if got := jsonShown([]byte(`{"b":"\\u003c\u003c","a":1}`)); got != `{"b":"\\u003c<","a":1}` {
			t.Fatalf("jsonShown = %s: an escaped backslash is text, the order is kept", got)
		}
	})

	t.Run("keep attention: an argument value whole at its boundaries", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		items := []api.AttentionItem{{Kind: api.AttentionApproval, Workflow: "mail", ID: "m1", Title: "Send it",
			Connector: "mail", Method: "send", Params: json.RawMessage(`{"ids":` + longList + `}`), Answers: []string{"approve"}}}
		if err := WriteAttentionItems(&b, items, 80); err != nil {
			t.Fatal(err)
		}
		wholePieces(t, "keep attention", longList, strings.Split(b.String(), "\n"))
	})

	t.Run("keep logs: a value cut at a boundary, the cut marked", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		lines := []api.TraceLine{{Phase: "prepare", Kind: "call", Connector: "mail", Method: "fetch",
			Args: `{"id":1}`, Result: longResult}}
		if err := WriteTrace(&b, "12", nil, lines); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		i := strings.Index(out, `{"messageId"`)
		if i < 0 {
			t.Fatalf("no result:\n%s", out)
		}
		shown, _, _ := strings.Cut(out[i:], "…")
		if !strings.HasPrefix(longResult, shown) || !strings.HasSuffix(shown, ",") && !strings.HasSuffix(shown, ":") {
			t.Fatalf("the result is not cut after a , or :\n%s", out)
		}
	})

	t.Run("an older trace's \\u003c shows as < in keep logs and the Run log", func(t *testing.T) {
		t.Parallel()
		old := []api.TraceLine{{At: testNow, Phase: "prepare", Kind: "call", Connector: "mail", Method: "fetch",
			Args: `{"id":"\u003cb@example.com\u003e"}`, Result: `{"ok":"a \u0026 b"}`, DurationMS: 3}}
		var b bytes.Buffer
		if err := WriteTrace(&b, "12", nil, old); err != nil {
			t.Fatal(err)
		}
		api := newStub()
		api.traces["14"] = old
		h := newHarness(t, api, 80, 24)
		h.keys("4", "enter")
		for where, out := range map[string]string{"keep logs": b.String(), "the Run log": h.screen()} {
			if !strings.Contains(out, `"<b@example.com>"`) || !strings.Contains(out, `"a & b"`) || strings.Contains(out, `\u00`) {
				t.Errorf("%s does not show < > & as themselves:\n%s", where, out)
			}
		}
	})
}
