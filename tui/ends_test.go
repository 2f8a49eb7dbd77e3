package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"keep/engine/api"
)

// walkEnds drives one paged pane over the real engine: G reads the oldest
// page in one call, up from there reads the newer pages in order, g reads
// the newest page in one call, and a second G and a walk all the way up
// hold every row once, in order. want is every id the pane may show,
// newest first; calls are the pane's reads so far; filter is the one
// typed, which every read must carry; title is the pane's.
func walkEnds[T any](t *testing.T, h *harness, l *pagedList[T], title func() string, calls func() []api.Page, want []string, filter string) {
	t.Helper()
	last := len(want) - 1
	selected := func() string {
		t.Helper()
		s := l.Selected()
		if s == nil {
			t.Fatal("nothing selected")
		}
		return l.idOf(*s)
	}
	readsOf := func(key string) []api.Page {
		t.Helper()
		n := len(calls())
		h.keys(key)
		reads := calls()[n:]
		for _, p := range reads {
			if p.Filter != filter || p.Limit >= len(want) {
				t.Fatalf("%s read %+v: not a page under the filter %q", key, p, filter)
			}
		}
		return reads
	}
	oldest := func() {
		t.Helper()
		if reads := readsOf("G"); len(reads) != 1 || !reads[0].Oldest || reads[0].Before != 0 || reads[0].After != 0 {
			t.Fatalf("G read %+v, want one oldest page", reads)
		}
		if id := selected(); id != want[last] || !l.hasNewer || l.hasMore {
			t.Fatalf("after G: %s selected (newer: %v, more: %v), want the oldest, %s", id, l.hasNewer, l.hasMore, want[last])
		}
		if !strings.Contains(title(), "↑ newer") {
			t.Fatalf("after G the title is %q, nothing of the newer rows above", title())
		}
	}
	// up walks from the oldest, one row a key, each the next newer one.
	up := func(from, steps int) []api.Page {
		t.Helper()
		var reads []api.Page
		for i := from + 1; i <= from+steps; i++ {
			key := "k"
			if i%2 == 0 {
				key = "up"
			}
			reads = append(reads, readsOf(key)...)
			if id := selected(); id != want[last-i] {
				t.Fatalf("%d up from the oldest: %s selected, want %s", i, id, want[last-i])
			}
		}
		for _, p := range reads {
			if p.After == 0 || p.Oldest || p.Before != 0 {
				t.Fatalf("scrolling up read %+v, want pages after the first held id", p)
			}
		}
		return reads
	}

	oldest()
	if reads := up(0, len(want)/2); len(reads) == 0 {
		t.Fatalf("walked %d up from a page of %d without reading newer ones", len(want)/2, len(l.items))
	}
	if reads := readsOf("g"); len(reads) != 1 || reads[0].Oldest || reads[0].Before != 0 || reads[0].After != 0 {
		t.Fatalf("g read %+v, want one newest page", reads)
	}
	if id := selected(); id != want[0] || l.hasNewer || !l.hasMore {
		t.Fatalf("after g: %s selected (newer: %v, more: %v), want the newest, %s", id, l.hasNewer, l.hasMore, want[0])
	}
	if strings.Contains(title(), "newer") {
		t.Fatalf("at the newest the title is still %q", title())
	}

	oldest()
	up(0, last)
	var held []string
	for _, it := range l.items {
		held = append(held, l.idOf(it))
	}
	if !slices.Equal(held, want) || l.hasNewer {
		t.Fatalf("after walking up from the oldest, holds %d rows (newer: %v), want all %d newest first", len(held), l.hasNewer, len(want))
	}
}

func TestRealEngineEnds(t *testing.T) {
	t.Parallel()
	const total = 300
	ctx := context.Background()
	r := newRealEngine(t)
	for i := range total {
		r.Write(fmt.Sprintf("inbox/n%03d.txt", i), fmt.Sprintf("note %d", i))
	}
	r.Deploy("notes", []byte(copyWorkflow))
	// the copies go without asking, so every note makes a run too
	if err := r.E.Grant(ctx, "notes", api.GrantView{Capability: "files.write", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	r.Drain()
	all, err := r.E.Inputs(ctx, "notes", api.Page{Limit: 1000})
	if err != nil || len(all) != total {
		t.Fatalf("inputs: %v, %d of %d", err, len(all), total)
	}
	runs, err := r.E.Runs(ctx, "notes", api.Page{Limit: 1000})
	if err != nil || len(runs) < total {
		t.Fatalf("runs: %v, %d for %d inputs", err, len(runs), total)
	}
	ids := func(n int, id func(int) string, keep func(int) bool) []string {
		var out []string
		for i := range n {
			if keep(i) {
				out = append(out, id(i))
			}
		}
		return out
	}
	every := func(int) bool { return true }

	t.Run("inputs: G shows the oldest at once, up brings the newer in order, g the newest", func(t *testing.T) {
		t.Parallel()
		api := &countingAPI{API: r.API}
		h := newHarnessAt(t, api, r.Clock.Now, 120, 40)
		h.keys("2")
		h.keys("G")
		if s := h.screen(); !strings.Contains(s, "Note n000.txt") || strings.Contains(s, "Note n299.txt") {
			t.Fatalf("after G the oldest input is not on screen alone:\n%s", s)
		}
		h.keys("g")
		walkEnds(t, h, &h.m.in.pagedList, h.m.in.Title, api.calls, ids(total, func(i int) string { return all[i].InputID }, every), "")
		if s := h.screen(); !strings.Contains(s, "Note n299.txt") {
			t.Fatalf("the newest input is not on screen after walking up:\n%s", s)
		}
	})

	t.Run("inputs: a notification after G re-reads the window from its top, not the newest", func(t *testing.T) {
		t.Parallel()
		api := &countingAPI{API: r.API}
		h := newHarnessAt(t, api, r.Clock.Now, 120, 40)
		h.keys("2", "G")
		first, _ := idNum(h.m.in.items[0].InputID)
		held := len(h.m.in.items)
		n := len(api.calls())
		h.run(h.m.refresh())
		reads := api.calls()[n:]
		if len(reads) != 1 || reads[0].Before != first+1 || reads[0].Oldest || reads[0].After != 0 {
			t.Fatalf("re-read %+v, want one page below %d", reads, first+1)
		}
		if in := h.m.in.Selected(); in == nil || in.InputID != all[total-1].InputID || len(h.m.in.items) != held ||
			!h.m.in.hasNewer || h.m.in.hasMore {
			t.Fatalf("after the re-read: %d held (newer: %v, more: %v), selected %+v, want the same window on the oldest",
				len(h.m.in.items), h.m.in.hasNewer, h.m.in.hasMore, in)
		}
	})

	t.Run("inputs under a filter: G and up keep to the matching ones", func(t *testing.T) {
		t.Parallel()
		api := &countingAPI{API: r.API}
		h := newHarnessAt(t, api, r.Clock.Now, 120, 40)
		h.keys("2", "/", "n", "1", "enter")
		want := ids(total, func(i int) string { return all[i].InputID }, func(i int) bool { return strings.Contains(all[i].Title, "n1") })
		if len(want) != 100 {
			t.Fatalf("%d inputs match n1, want 100", len(want))
		}
		walkEnds(t, h, &h.m.in.pagedList, h.m.in.Title, api.calls, want, "n1")
		if in := h.m.in.items[len(h.m.in.items)-1]; in.Title != "Note n100.txt" {
			t.Fatalf("the oldest match is %q", in.Title)
		}
	})

	t.Run("runs: G shows the oldest at once, up brings the newer in order, g the newest", func(t *testing.T) {
		t.Parallel()
		api := &countingAPI{API: r.API}
		h := newHarnessAt(t, api, r.Clock.Now, 120, 40)
		h.keys("4")
		walkEnds(t, h, &h.m.rn.pagedList, h.m.rn.Title, api.runCalls, ids(len(runs), func(i int) string { return runs[i].ID }, every), "")
	})
}
