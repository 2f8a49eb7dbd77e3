package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// benchDB opens a fresh database with one workflow and one input.
func benchDB(b *testing.B) (*DB, int64, int64) {
	b.Helper()
	ctx := context.Background()
	db, err := Open(ctx, Opts{Path: filepath.Join(b.TempDir(), "keep.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var wf int64
	in := &Input{ID: 1, Source: "bench", Type: "item", ExternalID: "1", Title: "one", CreatedAt: now}
	if err := db.Write(ctx, func(tx *Tx) (err error) {
		if wf, err = tx.CreateWorkflow(ctx, "bench", now); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, wf, "t"); err != nil {
			return err
		}
		in.WorkflowID = wf
		return tx.InsertInput(ctx, in)
	}); err != nil {
		b.Fatal(err)
	}
	return db, wf, in.ID
}

// BenchmarkWritePublishEvent is one durable Write per published event: the
// commit (fsync) dominates, statement preparation is the rest.
func BenchmarkWritePublishEvent(b *testing.B) {
	db, wf, in := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	payload := json.RawMessage(`{"n":1}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := db.Write(ctx, func(tx *Tx) error {
			_, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(i), payload, 0, []int64{in}, now)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishEventInTx publishes 100 events per Write and reports the
// cost of one: the statements without the commit, where parsing shows.
func BenchmarkPublishEventInTx(b *testing.B) {
	db, wf, in := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	payload := json.RawMessage(`{"n":1}`)
	const batch = 100
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		if err := db.Write(ctx, func(tx *Tx) error {
			for j := i; j < i+batch && j < b.N; j++ {
				if _, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(j), payload, 0, []int64{in}, now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadPeek is a page of pending events from the read pool.
func BenchmarkReadPeek(b *testing.B) {
	db, wf, in := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		for j := 0; j < 100; j++ {
			if _, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(j), json.RawMessage(`{}`), 0, []int64{in}, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := db.Read().Peek(ctx, wf, "t", 10)
		if err != nil || len(evs) != 10 {
			b.Fatal(len(evs), err)
		}
	}
}

// benchSnapshot is the scheduler step's reads after a commit, as each step
// finds them: the workflow, its schedules and its pending events, read
// through read (ReadTx or ReadLatest) after an unsynced write of one event.
func benchSnapshot(b *testing.B, read func(*DB) func(context.Context, func(Q) error) error) {
	db, wf, in := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		for j := 0; j < 2000; j++ {
			if _, err := tx.PublishEvent(ctx, wf, "t", "seed-"+strconv.Itoa(j), json.RawMessage(`{"n":1}`), 0, []int64{in}, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer() // the reads are timed, not the write
		if err := db.WriteUnsynced(ctx, func(tx *Tx) error {
			_, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(i), json.RawMessage(`{"n":1}`), 0, []int64{in}, now)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := read(db)(ctx, func(q Q) error {
			if _, err := q.WorkflowByID(ctx, wf); err != nil {
				return err
			}
			if _, err := q.Schedules(ctx, wf); err != nil {
				return err
			}
			if _, err := q.ActiveRunRefs(ctx, wf); err != nil {
				return err
			}
			evs, err := q.Peek(ctx, wf, "t", 8)
			if err == nil && len(evs) != 8 {
				err = fmt.Errorf("%d events, want 8", len(evs))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotReadTx and BenchmarkSnapshotReadLatest: the step's reads
// after a commit on a read connection, whose page cache the commit emptied,
// and on the writer's.
func BenchmarkSnapshotReadTx(b *testing.B) {
	benchSnapshot(b, func(db *DB) func(context.Context, func(Q) error) error { return db.ReadTx })
}

func BenchmarkSnapshotReadLatest(b *testing.B) {
	benchSnapshot(b, func(db *DB) func(context.Context, func(Q) error) error { return db.ReadLatest })
}
