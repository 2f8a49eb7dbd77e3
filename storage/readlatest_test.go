package storage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestReadLatest: reads on the writer connection see every commit so far,
// an unsynced one too, and no commit in between them: a write of two
// events is seen whole or not at all, though the reads take no
// transaction of their own.
func TestReadLatest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wf int64
	if err := db.Write(ctx, func(tx *Tx) (err error) {
		if wf, err = tx.CreateWorkflow(ctx, "a", now); err != nil {
			return err
		}
		return tx.EnsureTopic(ctx, wf, "t")
	}); err != nil {
		t.Fatal(err)
	}
	publish := func(tx *Tx, id string) error {
		_, err := tx.PublishEvent(ctx, wf, "t", id, json.RawMessage(`{}`), 0, nil, now)
		return err
	}
	if err := db.WriteUnsynced(ctx, func(tx *Tx) error { return publish(tx, "first") }); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadLatest(ctx, func(q Q) error {
		evs, err := q.Peek(ctx, wf, "t", 10)
		if err == nil && len(evs) != 1 {
			t.Errorf("read %d events after an unsynced commit of one, want 1", len(evs))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// writers commit two events at a time while the reads count twice
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if err := db.WriteUnsynced(ctx, func(tx *Tx) error {
					if err := publish(tx, id+"a"); err != nil {
						return err
					}
					return publish(tx, id+"b")
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false // one read more, after the last commit
		default:
		}
		if err := db.ReadLatest(ctx, func(q Q) error {
			a, err := q.Peek(ctx, wf, "t", 1_000_000)
			if err != nil {
				return err
			}
			b, err := q.Peek(ctx, wf, "t", 1_000_000)
			if err == nil && len(a) != len(b) {
				t.Errorf("two reads found %d and %d events: a commit came in between", len(a), len(b))
			}
			if len(a)%2 != 1 {
				t.Errorf("read %d events: a commit of two was seen in part", len(a))
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPeekSkipping: the events skip holds are passed over, and the read
// stops at limit others.
func TestPeekSkipping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wf, run int64
	var ids []int64
	if err := db.Write(ctx, func(tx *Tx) (err error) {
		if wf, err = tx.CreateWorkflow(ctx, "a", now); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, wf, "t"); err != nil {
			return err
		}
		for i := range 10 {
			id, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(i), json.RawMessage(`{}`), 0, nil, now)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		r := &Run{WorkflowID: wf, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
			Phase: "prepared", Status: RunActive, CreatedAt: now, UpdatedAt: now}
		if run, err = tx.InsertRun(ctx, r); err != nil {
			return err
		}
		return tx.Reserve(ctx, wf, run, ids[:1], now) // reserved: not pending-and-free
	}); err != nil {
		t.Fatal(err)
	}
	skip := map[int64]bool{ids[0]: true, ids[1]: true, ids[2]: true, ids[4]: true}
	var asked []int64
	evs, err := db.Read().PeekSkipping(ctx, wf, "t", 2, len(skip), func(id int64) bool {
		asked = append(asked, id)
		return skip[id]
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.MessageID)
	}
	if len(got) != 2 || got[0] != "3" || got[1] != "5" {
		t.Errorf("got %v, want [3 5]", got)
	}
	// 1, 2 skipped, 3 taken, 4 skipped, 5 taken: the rows after are not read
	if len(asked) != 5 {
		t.Errorf("read %d rows, want 5: it stops once it has its limit", len(asked))
	}
}
