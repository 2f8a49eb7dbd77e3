package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"keep/engine/api"
	"keep/engine/enginetest"
)

// Layer 4: the TUI over the real engine, built by engine/enginetest
// builds it (a real database in a temp dir, the real connectors rooted in
// another, an injected clock), so the views the TUI reads and the calls it
// makes are the engine's own, not a stub's idea of them.

// realEngine is enginetest's host with the default policy (a mutation
// asks before it runs) and the TUI's harness on its clock.
type realEngine struct{ *enginetest.Host }

func newRealEngine(t *testing.T) *realEngine {
	t.Helper()
	return &realEngine{enginetest.New(t, enginetest.Opts{})}
}

// harness drives the TUI over api with the engine's clock.
func (r *realEngine) harness(api api.API, w, h int) *harness {
	r.T.Helper()
	return newHarnessAt(r.T, api, r.Clock.Now, w, h)
}

// copyWorkflow: a producer registers an input per note in inbox/, a
// consumer copies each note to out/ (a files.write, which asks first).
const copyWorkflow = `
export default Keep.workflow({
  name: "notes",
  topics: { "note.found": {} },
  producers: {
    scan: {
      publishes: ["note.found"],
      schedule: { interval: "5m" },
      handler: async (ctx) => {
        const files = await ctx.files.list({ dir: "inbox", glob: "*.txt" });
        for (const f of files) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name });
          await ctx.publish("note.found", { messageId: f.path, inputId, payload: { path: f.path, name: f.name } });
        }
        return {};
      },
    },
  },
  consumers: {
    copy: Keep.consumer({
      subscribe: ["note.found"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("note.found", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        const note = await ctx.files.read({ path: ev.payload.path });
        return {
          reservations: [{ topic: "note.found", ids: [ev.messageId] }],
          data: { name: ev.payload.name, content: note.content },
          ui: { title: "Copy " + ev.payload.name },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.write({ path: "out/" + prepared.data.name, content: prepared.data.content });
      },
      async next() {},
    }),
  },
});
`

// awaitingApproval deploys copyWorkflow over one note and drains it, so
// the copy waits for approval, and starts the TUI on it.
func (r *realEngine) awaitingApproval(w, h int) *harness {
	r.T.Helper()
	r.Write("inbox/a.txt", "alpha")
	r.Deploy("notes", []byte(copyWorkflow))
	r.Drain()
	return r.harness(r.API, w, h)
}

// deliver feeds the TUI the notifications the engine has sent so far, as
// Run's bridge would; it says how many there were.
func deliver(h *harness, notes <-chan api.Notification) int {
	n := 0
	for {
		select {
		case note := <-notes:
			h.send(notifyMsg(note))
			n++
		default:
			return n
		}
	}
}

func TestRealEngine(t *testing.T) {
	t.Parallel()

	t.Run("an approval is listed with its call, 3 a approves it, and the input shows done", func(t *testing.T) {
		t.Parallel()
		r := newRealEngine(t)
		h := r.awaitingApproval(120, 40)
		notes, cancel := r.E.Subscribe()
		defer cancel()
		if got := r.Read("out/a.txt"); got != "" {
			t.Fatalf("written before approval: %q", got)
		}

		at := h.m.at.View()
		for _, want := range []string{"APPROVAL", "notes · Copy a.txt", "because of: Note a.txt"} {
			if !strings.Contains(at, want) {
				t.Errorf("attention lacks %q:\n%s", want, at)
			}
		}
		// Beside the title, the call as the host observed it: connector,
		// method and target, then the connector's preview of the parameters.
		lines := strings.Split(at, "\n")
		i := slices.IndexFunc(lines, func(l string) bool {
			return strings.HasPrefix(strings.TrimSpace(l), "call: files.write → out/a.txt")
		})
		if i < 0 || i+1 == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "write out/a.txt (") {
			t.Errorf("no call line naming files.write and its target, then its preview:\n%s", at)
		}
		if in := h.m.in.Selected(); in == nil || in.Title != "Note a.txt" || in.Status == api.InputDone {
			t.Fatalf("input before approval = %+v", in)
		}

		h.keys("3", "a")
		if h.m.errText != "" {
			t.Fatalf("approve failed: %s", h.m.errText)
		}
		if s := h.screen(); !strings.Contains(s, "approved Copy a.txt") {
			t.Fatalf("status line does not say it was approved:\n%s", s)
		}
		r.Drain()
		if got := r.Read("out/a.txt"); got != "alpha" {
			t.Fatalf("out/a.txt = %q after approve and drain", got)
		}
		if deliver(h, notes) == 0 {
			t.Fatal("the engine sent no notification for the approval and the run")
		}

		h.keys("2")
		in := h.m.in.Selected()
		if in == nil || in.Status != api.InputDone || len(in.Outputs) != 1 || in.Outputs[0].Status != "applied" {
			t.Fatalf("input after the re-read = %+v", in)
		}
		view := h.m.in.View()
		for _, want := range []string{"✓ Note a.txt", "done", "→ Copy a.txt", "applied"} {
			if !strings.Contains(view, want) {
				t.Errorf("inputs lack %q:\n%s", want, view)
			}
		}
		if at := h.m.at.View(); strings.Contains(at, "APPROVAL") {
			t.Errorf("the approved item is still listed:\n%s", at)
		}
	})

	t.Run("a refresh alone re-reads what changed", func(t *testing.T) {
		t.Parallel()
		r := newRealEngine(t)
		h := r.awaitingApproval(80, 24)
		h.keys("3", "a")
		r.Drain()
		h.run(h.m.refresh())
		if in := h.m.in.Selected(); in == nil || in.Status != api.InputDone {
			t.Fatalf("input after a refresh = %+v", in)
		}
	})
}

// countingAPI is the real engine with its Inputs and Runs calls counted.
type countingAPI struct {
	api.API
	mu       sync.Mutex
	pages    []api.Page
	runPages []api.Page
}

func (c *countingAPI) Runs(ctx context.Context, workflow string, p api.Page) ([]api.RunView, error) {
	c.mu.Lock()
	c.runPages = append(c.runPages, p)
	c.mu.Unlock()
	return c.API.Runs(ctx, workflow, p)
}

func (c *countingAPI) runCalls() []api.Page {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.runPages)
}

func (c *countingAPI) Inputs(ctx context.Context, workflow string, p api.Page) ([]api.InputView, error) {
	c.mu.Lock()
	c.pages = append(c.pages, p)
	c.mu.Unlock()
	return c.API.Inputs(ctx, workflow, p)
}

func (c *countingAPI) calls() []api.Page {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.pages)
}

func TestRealEnginePaging(t *testing.T) {
	t.Parallel()
	const total = 300
	r := newRealEngine(t)
	for i := range total {
		r.Write(fmt.Sprintf("inbox/n%03d.txt", i), fmt.Sprintf("note %d", i))
	}
	r.Deploy("notes", []byte(copyWorkflow))
	r.Drain()

	api := &countingAPI{API: r.API}
	h := r.harness(api, 120, 40)
	first := api.calls()
	if len(first) != 1 || first[0].Before != 0 || first[0].Limit >= total {
		t.Fatalf("first reads = %+v, want one first page", first)
	}
	if n := len(h.m.in.items); n != first[0].Limit || !h.m.in.hasMore {
		t.Fatalf("holds %d inputs (more: %v) after a page of %d", n, h.m.in.hasMore, first[0].Limit)
	}
	if !strings.Contains(h.m.in.View(), "Note n299.txt") {
		t.Fatalf("the newest input is not first:\n%s", h.m.in.View())
	}

	h.keys("2")
	for range total {
		if len(h.m.in.items) == total && !h.m.in.hasMore {
			break
		}
		h.keys("pgdown")
	}
	pages := api.calls()
	if len(h.m.in.items) != total || h.m.in.hasMore {
		t.Fatalf("holds %d of %d inputs after paging down (more: %v); reads %+v", len(h.m.in.items), total, h.m.in.hasMore, pages)
	}
	if len(pages) < 3 {
		t.Fatalf("%d reads for %d inputs: not paged", len(pages), total)
	}
	seen := map[string]bool{}
	for i, in := range h.m.in.items {
		if seen[in.InputID] {
			t.Fatalf("input %s held twice", in.InputID)
		}
		seen[in.InputID] = true
		if i > 0 {
			a, _ := idNum(h.m.in.items[i-1].InputID)
			b, _ := idNum(in.InputID)
			if b >= a {
				t.Fatalf("not newest first at %d: %s after %s", i, in.InputID, h.m.in.items[i-1].InputID)
			}
		}
	}
	for i, p := range pages[1:] {
		if p.Before == 0 || p.Limit >= total {
			t.Fatalf("read %d = %+v, want a page before the last held id", i+1, p)
		}
	}
	if s := h.screen(); !strings.Contains(s, "Note n000.txt") {
		t.Fatalf("the oldest input is not on screen at the end:\n%s", s)
	}
}
