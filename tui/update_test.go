package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"keep/engine"
	"keep/engine/api"
)

// Layer 1: Update driven directly, with a stub API and a fixed clock.

func setup(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, newStub(), 120, 40)
}

func TestFocus(t *testing.T) {
	t.Parallel()

	t.Run("tab and shift+tab cycle the panes, number keys jump", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		want := func(f focus) {
			t.Helper()
			if h.m.focus != f {
				t.Fatalf("focus = %d, want %d", h.m.focus, f)
			}
		}
		want(focusWorkflows)
		h.keys("tab")
		want(focusInputs)
		h.keys("tab", "tab", "tab", "tab")
		want(focusWorkflows)
		h.keys("shift+tab")
		want(focusAccounts)
		h.keys("4")
		want(focusRuns)
		h.keys("3")
		want(focusAttention)
		h.keys("1")
		want(focusWorkflows)
	})

	t.Run("the wide layout shows the last chosen of Attention and Run log below", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		if !strings.Contains(h.screen(), "3 Attention (2)") {
			t.Fatal("Attention not shown below at start")
		}
		h.keys("4", "1")
		s := h.screen()
		if !strings.Contains(s, "4 Run log") || strings.Contains(s, "3 Attention") {
			t.Fatalf("Run log not kept below after going back to pane 1:\n%s", s)
		}
	})

	t.Run("q and ctrl+c quit", func(t *testing.T) {
		t.Parallel()
		for _, k := range []string{"q", "ctrl+c"} {
			h := setup(t)
			h.keys(k)
			if !h.quit {
				t.Errorf("%s did not quit", k)
			}
		}
	})

	t.Run("moving in pane 1 shows the chosen workflow's inputs and runs", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("down")
		if h.m.in.workflow != "inbox-archive" || h.m.rn.workflow != "inbox-archive" {
			t.Fatalf("inputs/runs follow %q/%q, want inbox-archive", h.m.in.workflow, h.m.rn.workflow)
		}
		if !slices.ContainsFunc(h.api.Calls(), func(c string) bool { return strings.HasPrefix(c, "read Inputs inbox-archive before=0 ") }) {
			t.Fatalf("inputs not read for inbox-archive: %v", h.api.Calls())
		}
		if !strings.Contains(h.screen(), "No inputs yet.") {
			t.Fatal("empty inputs not said in words")
		}
	})
}

func TestFilter(t *testing.T) {
	t.Parallel()

	t.Run("typing narrows the workflows, q is text, esc clears", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("/", "d", "i", "q")
		if h.quit {
			t.Fatal("q quit while typing a filter")
		}
		h.keys("backspace")
		if got := len(h.m.wf.shown); got != 1 || h.m.wf.shown[0].Name != "daily-digest" {
			t.Fatalf("filter 'di' shows %v", h.m.wf.shown)
		}
		if h.m.in.workflow != "daily-digest" {
			t.Fatalf("inputs follow %q after filtering", h.m.in.workflow)
		}
		h.keys("esc")
		if len(h.m.wf.shown) != 3 || h.m.wf.filter.Active() {
			t.Fatal("esc did not clear the filter")
		}
	})

	t.Run("enter keeps the filter and gives the keys back", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("/", "i", "n", "b", "enter", "q")
		if !h.quit {
			t.Fatal("q after enter did not quit")
		}
		if len(h.m.wf.shown) != 1 {
			t.Fatal("enter dropped the filter")
		}
	})

	t.Run("the inputs filter is asked of the API, from the first page", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("2", "/", "b", "o", "b")
		if !slices.ContainsFunc(h.api.Calls(), func(c string) bool {
			return strings.HasPrefix(c, "read Inputs email-to-sheets before=0 ") && strings.HasSuffix(c, `filter="bob"`)
		}) {
			t.Fatalf("no filtered read: %v", h.api.Calls())
		}
		if len(h.m.in.items) != 1 || !strings.Contains(h.m.in.items[0].Title, "bob") {
			t.Fatalf("filtered inputs = %v", h.m.in.items)
		}
	})
}

func TestAnswers(t *testing.T) {
	t.Parallel()

	t.Run("approve calls Approve with the mutation id at once", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "a")
		if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7 always=false"}) {
			t.Fatalf("calls = %v", got)
		}
		if !strings.Contains(h.screen(), "approved Add row for alice@example.com") {
			t.Fatal("status line does not say it was approved")
		}
	})

	t.Run("approve always says so to the API", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "A")
		if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7 always=true"}) {
			t.Fatalf("calls = %v", got)
		}
	})

	t.Run("reject asks first; n cancels without a call", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "x")
		s := h.screen()
		if !strings.Contains(s, "sure?") || !strings.Contains(s, "reject: the change will not be made") {
			t.Fatalf("no confirmation shown:\n%s", s)
		}
		h.keys("a") // other keys do nothing while the question is open
		h.keys("n")
		if got := h.api.actions(); len(got) != 0 {
			t.Fatalf("calls after n = %v", got)
		}
		if h.m.confirm != nil || !strings.Contains(h.screen(), "cancelled") {
			t.Fatal("question not closed with a word")
		}
	})

	t.Run("reject asks first; y calls Reject", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "x", "y")
		if got := h.api.actions(); !slices.Equal(got, []string{"Reject m7"}) {
			t.Fatalf("calls = %v", got)
		}
	})

	t.Run("the reconciliation answers, each saying what follows", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			key, says, call string
		}{
			{"h", "it happened: it will be recorded as done", "Resolve m3 happened"},
			{"f", "it didn't happen: sent again under the same idempotency key", "Resolve m3 not-happened"},
			{"s", "skip: the change will not be made; the events will be marked skipped", "Resolve m3 skip"},
		}
		for _, c := range cases {
			h := setup(t)
			h.keys("3", "down", c.key)
			if s := h.screen(); !strings.Contains(s, c.says) {
				t.Errorf("%s: consequence %q not shown:\n%s", c.key, c.says, s)
			}
			h.keys("y")
			if got := h.api.actions(); !slices.Equal(got, []string{c.call}) {
				t.Errorf("%s: calls = %v, want %s", c.key, got, c.call)
			}
		}
		h := setup(t)
		h.keys("3", "down", "c")
		if got := h.api.actions(); !slices.Equal(got, []string{"Resolve m3 try-again"}) {
			t.Errorf("c: calls = %v (check again needs no confirmation)", got)
		}
	})

	t.Run("answers that do not apply are off and out of help", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3")
		h.keys("c", "h", "r", "S")
		if got := h.api.actions(); len(got) != 0 {
			t.Fatalf("reconciliation keys acted on an approval: %v", got)
		}
		help := h.m.helpView()
		for _, no := range []string{"check again", "it happened", "retry", "skip input"} {
			if strings.Contains(help, no) {
				t.Errorf("help offers %q on an approval: %s", no, help)
			}
		}
		h.keys("down", "a", "x")
		if got := h.api.actions(); len(got) != 0 || h.m.confirm != nil {
			t.Fatalf("approval keys acted on a reconciliation: %v", got)
		}
		if help := h.m.helpView(); strings.Contains(help, "approve") || !strings.Contains(help, "it happened") {
			t.Errorf("help on a reconciliation: %s", help)
		}
	})

	t.Run("the engine's list of answers narrows the keys", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		api.attention[0].Answers = []string{"approve"}
		h := newHarness(t, api, 120, 40)
		h.keys("3", "x")
		if h.m.confirm != nil || len(api.actions()) != 0 {
			t.Fatal("reject worked though the engine does not accept it now")
		}
	})

	t.Run("an error comes back to the status line, not a crash", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		api.fail = errors.New("already answered")
		h := newHarness(t, api, 120, 40)
		h.keys("3", "a")
		if s := h.screen(); !strings.Contains(s, "approved Add row for alice@example.com failed: already answered") {
			t.Fatalf("error not shown:\n%s", s)
		}
		h.keys("down")
		if strings.Contains(h.screen(), "already answered") {
			t.Fatal("error outlived the next key")
		}
	})

	t.Run("an answer to a card no longer waiting says so, not that it failed", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		api.fail = fmt.Errorf("%w: mutation 7 is applied, not waiting for approval", engine.ErrRefused)
		h := newHarness(t, api, 120, 40)
		h.keys("3", "a")
		s := h.screen()
		if !strings.Contains(s, "Add row for alice@example.com is no longer waiting") || strings.Contains(s, "failed:") {
			t.Fatalf("the status line:\n%s", s)
		}
	})

	t.Run("enter on a failed run opens its trace in the Run log", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		apiHost.attention = append(apiHost.attention, api.AttentionItem{Kind: api.AttentionFailedRun,
			Workflow: "email-to-sheets", ID: "12", Title: "toSheet failed", Reason: "TypeError", Block: 4})
		h := newHarness(t, apiHost, 120, 40)
		h.keys("3", "down", "down")
		h.keys("r")
		if got := apiHost.actions(); !slices.Equal(got, []string{"Retry email-to-sheets@4"}) {
			t.Fatalf("r on a failed run: %v", got)
		}
		h.keys("enter")
		if h.m.focus != focusRuns || h.m.rn.traceRun != "12" {
			t.Fatalf("focus %d trace %q", h.m.focus, h.m.rn.traceRun)
		}
		if !strings.Contains(h.screen(), "mail.fetch") {
			t.Fatal("trace not shown")
		}
		h.keys("esc")
		if h.m.rn.traceRun != "" {
			t.Fatal("esc did not close the trace")
		}
	})
}

func TestAttentionCall(t *testing.T) {
	t.Parallel()

	t.Run("approvals and reconciliations name their call before the parameters", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3")
		v := h.m.at.View()
		lines := strings.Split(ansi.Strip(v), "\n")
		for _, want := range [][2]string{{"call: sheets.appendRow", `sheet: "invoices.csv"`}, {"call: slack.post", `channel: "#finance"`}} {
			i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == want[0] })
			if i < 0 || i+1 == len(lines) || strings.TrimSpace(lines[i+1]) != want[1] {
				t.Errorf("no %q above %q:\n%s", want[0], want[1], v)
			}
		}
		h.keys("enter")
		lines = strings.Split(ansi.Strip(h.m.at.View()), "\n")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "call: sheets.appendRow" })
		if i < 0 || i+2 >= len(lines) || strings.TrimSpace(lines[i+1]) != `sheet: "invoices.csv"` ||
			strings.TrimSpace(lines[i+2]) != `values: ["alice@example.com","Invoice December"]` {
			t.Errorf("details do not name the call above the parameters:\n%s", strings.Join(lines, "\n"))
		}
	})

	t.Run("an item without a call shows only its parameters", func(t *testing.T) {
		t.Parallel()
		if got, _ := callLines(callView{params: []byte(`{"a":1}`)}, 80, 0, 0, ""); !slices.Equal(got, []string{"a: 1"}) {
			t.Fatalf("callLines = %q", got)
		}
		if got, _ := callLines(callView{connector: "files", method: "write"}, 80, 0, 0, ""); !slices.Equal(got, []string{"files.write"}) {
			t.Fatalf("callLines = %q", got)
		}
	})

	t.Run("at 80x24 the call, its target and its preview wrap whole beside the script's title", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		url := "https://hooks.example.net/services/T0000/B0000/a-very-long-webhook-path-that-does-not-fit"
		apiHost.attention = []api.AttentionItem{{Kind: api.AttentionApproval, Workflow: "notes", ID: "m9",
			Title: "Post a friendly note", Connector: "http", Method: "request", Target: "hooks.example.net",
			Params:  json.RawMessage(`{"method":"POST","url":"` + url + `"}`),
			Preview: "POST " + url + " Authorization: [held by host] body: 2048 bytes to every subscriber of the list",
			Reason:  "your grant for http.request asks before each call", Answers: []string{"approve", "reject"}}}
		h := newHarness(t, apiHost, 80, 24)
		h.keys("3")
		screen := ansi.Strip(h.screen())
		var call []string
		in := false
		for _, l := range strings.Split(screen, "\n") {
			l = strings.Trim(l, "│ ")
			if strings.HasPrefix(l, "call: ") {
				in = true
			} else if strings.HasPrefix(l, "your grant") {
				in = false
			}
			if in {
				call = append(call, strings.TrimPrefix(l, "call: "))
			}
		}
		if len(call) < 3 {
			t.Fatalf("the call is not wrapped over several lines:\n%s", screen)
		}
		for _, l := range call {
			if strings.HasSuffix(l, "…") {
				t.Errorf("a call line ends in an ellipsis: %q\n%s", l, screen)
			}
		}
		joined := strings.Join(call, "")
		for _, want := range []string{"http.request → hooks.example.net", url, "[held by host]", "every subscriber of the list"} {
			if !strings.Contains(strings.ReplaceAll(joined, " ", ""), strings.ReplaceAll(want, " ", "")) {
				t.Errorf("the call shown lacks %q:\n%s", want, screen)
			}
		}
		if !strings.Contains(screen, "notes · Post a friendly note") {
			t.Errorf("the script's title is not beside it:\n%s", screen)
		}
	})
}

func TestInputs(t *testing.T) {
	t.Parallel()

	t.Run("S skips an input after y, and only where it applies", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("2", "down", "S") // a done input: nothing to skip
		if h.m.confirm != nil {
			t.Fatal("skip offered on a done input")
		}
		h.keys("down", "down", "S")
		if s := h.screen(); !strings.Contains(s, "skip: the events will be marked skipped and not processed") {
			t.Fatalf("no consequence:\n%s", s)
		}
		h.keys("y")
		if got := h.api.actions(); !slices.Equal(got, []string{"SkipInput 10"}) {
			t.Fatalf("calls = %v", got)
		}
	})

	t.Run("enter shows each output's call and parameters; esc folds", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("2", "enter")
		if v := h.m.in.View(); !strings.Contains(v, "sheets.appendRow") || !strings.Contains(v, `sheet: "invoices.csv"`) {
			t.Fatalf("details not shown:\n%s", h.screen())
		}
		h.keys("esc")
		// Only the inputs pane: Attention shows the call too.
		if strings.Contains(h.m.in.View(), `sheet: "invoices.csv"`) {
			t.Fatal("esc did not fold")
		}
	})

	t.Run("moving near the end asks for the next page, before the last id", func(t *testing.T) {
		t.Parallel()
		api := newBigAPI(100_000)
		h := newHarness(t, api, 80, 24)
		h.keys("2")
		first := len(h.m.in.items)
		if first == 0 || first >= 1000 {
			t.Fatalf("first read holds %d inputs", first)
		}
		pages := api.pages
		for range first {
			h.keys("down")
		}
		if api.pages <= pages || len(h.m.in.items) <= first {
			t.Fatalf("no further page: %d pages, %d inputs", api.pages, len(h.m.in.items))
		}
		for i := 1; i < len(h.m.in.items); i++ {
			if h.m.in.items[i].InputID == h.m.in.items[i-1].InputID {
				t.Fatal("a page was appended twice")
			}
		}
	})

	t.Run("G at a hundred thousand inputs reads the oldest page once, g the newest", func(t *testing.T) {
		t.Parallel()
		api := newBigAPI(100_000)
		h := newHarness(t, api, 80, 24)
		h.keys("2")
		pages := api.pages
		h.keys("G")
		if s := h.m.in.Selected(); api.pages != pages+1 || s == nil || s.InputID != "1" {
			t.Fatalf("G: %d reads, selected %+v; want one read and input 1", api.pages-pages, s)
		}
		if !strings.Contains(h.m.in.View(), "Email #1 from") {
			t.Fatalf("the oldest input is not on screen:\n%s", h.m.in.View())
		}
		h.keys("g")
		if s := h.m.in.Selected(); api.pages != pages+2 || s == nil || s.InputID != "100000" {
			t.Fatalf("g: %d reads, selected %+v; want one more read and input 100000", api.pages-pages-1, s)
		}
	})
}

func TestWorkflowActions(t *testing.T) {
	t.Parallel()

	t.Run("R and p act on the selected workflow; p resumes a paused one", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("R", "p")
		// pause asks first: nothing is paused until y
		if h.m.confirm == nil || !strings.Contains(h.m.confirm.question, "pause email-to-sheets?") || len(h.api.actions()) != 1 {
			t.Fatalf("p did not ask first (confirm %+v, calls %v)", h.m.confirm, h.api.actions())
		}
		h.keys("y", "down", "down")
		if !strings.Contains(h.m.helpView(), "resume") {
			t.Fatal("help does not say p resumes a paused workflow")
		}
		h.keys("p")
		want := []string{"RunNow email-to-sheets", "Pause email-to-sheets", "Resume daily-digest@0"}
		if got := h.api.actions(); !slices.Equal(got, want) {
			t.Fatalf("calls = %v, want %v", got, want)
		}
	})

	t.Run("in Attention, R acts on the item's workflow", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "down", "R")
		if got := h.api.actions(); !slices.Equal(got, []string{"RunNow inbox-archive"}) {
			t.Fatalf("calls = %v", got)
		}
	})
}

func TestNotifications(t *testing.T) {
	t.Parallel()

	t.Run("a notification re-reads the panes and toasts what needs the person", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		h := newHarness(t, apiHost, 120, 40)
		before := len(apiHost.Calls())
		apiHost.attention = apiHost.attention[:1]
		h.send(notifyMsg{Kind: api.NoteApproval, Workflow: "email-to-sheets", Text: "email-to-sheets asks to add a row"})
		reads := apiHost.Calls()[before:]
		for _, want := range []string{"read Workflows", "read Attention", "read Inputs email-to-sheets", "read Runs email-to-sheets"} {
			if !slices.ContainsFunc(reads, func(c string) bool { return strings.HasPrefix(c, want) }) {
				t.Errorf("no %q after the notification: %v", want, reads)
			}
		}
		s := h.screen()
		if !strings.Contains(s, "Approval needed · email-to-sheets") {
			t.Errorf("no toast:\n%s", s)
		}
		if !strings.Contains(s, "last: email-to-sheets asks to add a row") {
			t.Errorf("status line does not show the notification:\n%s", s)
		}
		if !strings.Contains(s, "3 Attention (1)") {
			t.Errorf("attention not re-read:\n%s", s)
		}
		h.send(toastDoneMsg{id: h.m.toastN})
		if strings.Contains(h.screen(), "Approval needed") {
			t.Error("toast did not go")
		}
	})

	t.Run("notifications during a re-read make one more, not one each", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		h := newHarness(t, apiHost, 120, 40)
		first := h.m.refresh()
		for range 5 {
			if _, cmd := h.m.Update(notifyMsg{Kind: api.NoteChanged}); cmd != nil {
				t.Fatal("a re-read started while one was running")
			}
		}
		before := len(apiHost.Calls())
		h.run(first)
		if n := strings.Count(strings.Join(apiHost.Calls()[before:], "\n"), "read Workflows"); n != 2 {
			t.Fatalf("%d re-reads, want the running one and one more", n)
		}
	})

	t.Run("the startup note shows until something happens", func(t *testing.T) {
		t.Parallel()
		m := New(newStub(), Options{Now: func() time.Time { return testNow }, NoColor: true, StartupNote: "Drop a file into the inbox"})
		m.noTimers = true
		h := &harness{t: t, m: m}
		h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
		if !strings.Contains(h.screen(), "Drop a file into the inbox") {
			t.Fatal("no startup note")
		}
		h.send(notifyMsg{Kind: api.NoteChanged, Text: "inbox-archive ran"})
		if strings.Contains(h.screen(), "Drop a file") {
			t.Fatal("startup note outlived a notification")
		}
	})
}

func TestSmallScreen(t *testing.T) {
	t.Parallel()

	t.Run("at 80×24 every line fits and nothing is cut mid-word", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 80, 24)
		for _, k := range []string{"1", "2", "3", "4"} {
			h.keys(k)
			lines := strings.Split(ansi.Strip(h.screen()), "\n")
			if len(lines) != 24 {
				t.Fatalf("pane %s: %d lines", k, len(lines))
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w != 80 {
					t.Fatalf("pane %s: line %d cells wide: %q", k, w, l)
				}
			}
		}
	})

	t.Run("fit cuts at a word and marks it", func(t *testing.T) {
		t.Parallel()
		if got := fit("Email from alice@example.com: Invoice December", 40); got != "Email from alice@example.com: Invoice…" {
			t.Fatalf("fit = %q", got)
		}
		if got := fit("short", 40); got != "short" {
			t.Fatalf("fit = %q", got)
		}
	})
}

func TestOddSizes(t *testing.T) {
	t.Parallel()

	t.Run("tiny and odd terminals draw without a panic and within bounds", func(t *testing.T) {
		t.Parallel()
		for _, sz := range [][2]int{{1, 1}, {10, 3}, {20, 5}, {40, 10}, {99, 29}, {100, 30}, {200, 60}} {
			h := newHarness(t, newStub(), sz[0], sz[1])
			for _, k := range []string{"1", "2", "enter", "3", "?", "4", "enter"} {
				h.keys(k)
				lines := strings.Split(h.screen(), "\n")
				if len(lines) > sz[1] {
					t.Fatalf("%v after %s: %d lines", sz, k, len(lines))
				}
			}
		}
	})

	t.Run("enter on a workflow goes to its inputs", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("enter")
		if h.m.focus != focusInputs {
			t.Fatalf("focus = %d", h.m.focus)
		}
	})
}

func TestBlockedWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("on a blocked workflow, r retries and p resumes", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		apiHost.attention = []api.AttentionItem{{Kind: api.AttentionBlockedWorkflow, Workflow: "email-to-sheets",
			ID: "email-to-sheets", Title: "email-to-sheets is blocked", Reason: "needs you: 5 transient failures",
			Answers: []string{"retry", "resume"}, Block: 7}}
		h := newHarness(t, apiHost, 120, 40)
		h.keys("3")
		if !strings.Contains(h.m.helpView(), "resume") {
			t.Fatalf("help: %s", h.m.helpView())
		}
		h.keys("r", "p")
		want := []string{"Retry email-to-sheets@7", "Resume email-to-sheets@7"}
		if got := apiHost.actions(); !slices.Equal(got, want) {
			t.Fatalf("calls = %v, want %v", got, want)
		}
	})
}
