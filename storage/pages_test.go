package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// pagesFixture is two workflows whose inputs and runs interleave by id, so
// a page that leaked across workflows or skipped ids would show.
type pagesFixture struct {
	db       *DB
	ctx      context.Context
	wf       int64
	ins      []int64          // the workflow's input ids, oldest first
	runs     []int64          // its run ids, oldest first
	titles   map[int64]string // input id → title
	handlers map[int64]string // run id → handler
}

const pagesTotal = 23

func setupPages(t *testing.T) *pagesFixture {
	t.Helper()
	ctx := context.Background()
	db := openTemp(t)
	f := &pagesFixture{db: db, ctx: ctx, titles: map[int64]string{}, handlers: map[int64]string{}}
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var err error
	err = db.Write(ctx, func(tx *Tx) error {
		var wfs [2]int64
		for i, name := range []string{"mine", "other"} {
			if wfs[i], err = tx.CreateWorkflow(ctx, name, now); err != nil {
				return err
			}
		}
		f.wf = wfs[0]
		id := int64(0)
		for i := range pagesTotal {
			for _, wf := range wfs {
				id++
				// every third is a receipt (a file run), so a filter drops some
				title, handler := fmt.Sprintf("note %d", i), "copy"
				if i%3 == 0 {
					title, handler = fmt.Sprintf("receipt %d", i), "file"
				}
				in := &Input{ID: id, WorkflowID: wf, Source: "files", Type: "file", ExternalID: fmt.Sprint(id), Title: title, CreatedAt: now}
				if err := tx.InsertInput(ctx, in); err != nil {
					return err
				}
				runID, err := tx.InsertRun(ctx, &Run{WorkflowID: wf, Handler: handler, HandlerType: "consumer", ScriptVersion: 1,
					Phase: "committed", Status: "committed", CreatedAt: now, UpdatedAt: now})
				if err != nil {
					return err
				}
				if wf == f.wf {
					f.ins, f.runs = append(f.ins, id), append(f.runs, runID)
					f.titles[id], f.handlers[runID] = title, handler
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newestFirst is ids[from:to] (oldest first) the way a page holds them.
func newestFirst(ids []int64, from, to int) []int64 {
	out := slices.Clone(ids[max(from, 0):min(to, len(ids))])
	slices.Reverse(out)
	return out
}

func TestPagesFromTheOldestEnd(t *testing.T) {
	t.Parallel()
	f := setupPages(t)
	q := f.db.Read()
	inputIDs := func(after, before int64, limit int, filter string) []int64 {
		t.Helper()
		ins, err := q.InputsAfter(f.ctx, f.wf, after, before, limit, filter)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, in := range ins {
			out = append(out, in.ID)
		}
		return out
	}
	runIDs := func(after, before int64, limit int, handler string) []int64 {
		t.Helper()
		runs, err := q.RunsAfter(f.ctx, f.wf, after, before, limit, handler)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}

	for _, c := range []struct {
		what string
		all  []int64
		page func(after, before int64, limit int, filter string) []int64
	}{{"inputs", f.ins, inputIDs}, {"runs", f.runs, runIDs}} {
		t.Run(c.what+": the oldest page, then each page just newer, newest first", func(t *testing.T) {
			const limit = 5
			if got, want := c.page(0, 0, limit, ""), newestFirst(c.all, 0, limit); !slices.Equal(got, want) {
				t.Fatalf("oldest page = %v, want %v", got, want)
			}
			var walked []int64
			after := int64(0)
			for range pagesTotal {
				page := c.page(after, 0, limit, "")
				if len(page) == 0 {
					break
				}
				if len(page) > limit {
					t.Fatalf("page after %d holds %d, over the limit %d", after, len(page), limit)
				}
				if !slices.IsSortedFunc(page, func(a, b int64) int { return int(b - a) }) {
					t.Fatalf("page after %d not newest first: %v", after, page)
				}
				walked = append(walked, newestFirst(page, 0, len(page))...)
				after = page[0]
			}
			if !slices.Equal(walked, c.all) {
				t.Fatalf("walking up from the oldest = %v, want every id once in order %v", walked, c.all)
			}
			// the last page is short, the one past it empty
			if got := c.page(c.all[len(c.all)-3], 0, limit, ""); !slices.Equal(got, newestFirst(c.all, len(c.all)-2, len(c.all))) {
				t.Fatalf("page near the newest = %v", got)
			}
			if got := c.page(c.all[len(c.all)-1], 0, limit, ""); len(got) != 0 {
				t.Fatalf("page past the newest = %v", got)
			}
		})

		t.Run(c.what+": before bounds a page from the oldest end", func(t *testing.T) {
			if got, want := c.page(c.all[2], c.all[6], 10, ""), newestFirst(c.all, 3, 6); !slices.Equal(got, want) {
				t.Fatalf("page between = %v, want %v", got, want)
			}
		})
	}

	t.Run("a filter holds in pages from the oldest end", func(t *testing.T) {
		matching := func(all []int64, names map[int64]string, word string) []int64 {
			var out []int64
			for _, id := range all {
				if strings.Contains(names[id], word) {
					out = append(out, id)
				}
			}
			return out
		}
		receipts := matching(f.ins, f.titles, "receipt")
		if got, want := inputIDs(0, 0, 3, "RECEIPT"), newestFirst(receipts, 0, 3); !slices.Equal(got, want) {
			t.Fatalf("oldest receipts = %v, want %v", got, want)
		}
		if got, want := inputIDs(receipts[2], 0, 3, "receipt"), newestFirst(receipts, 3, 6); !slices.Equal(got, want) {
			t.Fatalf("receipts after %d = %v, want %v", receipts[2], got, want)
		}
		files := matching(f.runs, f.handlers, "file")
		if got, want := runIDs(0, 0, 4, "file"), newestFirst(files, 0, 4); !slices.Equal(got, want) {
			t.Fatalf("oldest file runs = %v, want %v", got, want)
		}
		if got, want := runIDs(files[3], 0, 4, "file"), newestFirst(files, 4, 8); !slices.Equal(got, want) {
			t.Fatalf("file runs after %d = %v, want %v", files[3], got, want)
		}
	})
}

// A page costs what it holds, however long the history: SQLite must walk
// the (workflow_id, id) index from the page's end, in either direction,
// and never sort the history to find it.
func TestPageQueriesUseTheWorkflowIndex(t *testing.T) {
	t.Parallel()
	f := setupPages(t)
	type pageCase struct {
		name, query, index string
		args               []any
	}
	var cases []pageCase
	for _, p := range []struct {
		name  string
		page  page
		index string
	}{{"inputs", inputsPage, "inputs_by_workflow"}, {"runs", runsPage, "runs_by_workflow"}} {
		for _, filter := range []string{"", "a"} {
			suffix := ""
			if filter != "" {
				suffix = ", filtered"
			}
			q, args := p.page.before(f.wf, 9, 5, filter)
			cases = append(cases, pageCase{p.name + " from the newest" + suffix, q, p.index, args})
			q, args = p.page.after(f.wf, 0, 9, 5, filter)
			cases = append(cases, pageCase{p.name + " from the oldest" + suffix, q, p.index, args})
		}
	}
	for _, c := range cases {
		t.Run(c.name+" uses "+c.index, func(t *testing.T) {
			t.Parallel()
			plan, err := queryPlan(f.ctx, f.db.Read().q, c.query, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			if !strings.Contains(text, "USING INDEX "+c.index) {
				t.Errorf("plan does not search %s:\n%s", c.index, text)
			}
			if strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("plan sorts the history to find a page:\n%s", text)
			}
		})
	}
}
