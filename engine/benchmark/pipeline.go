package benchmark

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"keep/storage"
)

// pipelineProducer is version 1 of the "pipeline" workflow: one producer
// run registers %d inputs and publishes one "item" event for each.
const pipelineProducer = `
export default Keep.workflow({
  name: "pipeline",
  topics: { "item": {}, "logged": {} },
  producers: {
    fill: {
      publishes: ["item"],
      schedule: { interval: "1h" },
      handler: async (ctx) => {
        for (let i = 0; i < %d; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "item-" + i, title: "Item " + i });
          await ctx.publish("item", { messageId: "item-" + i, inputId, payload: { n: i } });
        }
        return {};
      },
    },
  },
});
`

// pipelineConsumers is version 2: the same producer (not due again for an
// hour) and two consumers. A appends a line to a.csv and publishes
// "logged"; B appends the logged item to b.csv.
const pipelineConsumers = `
export default Keep.workflow({
  name: "pipeline",
  topics: { "item": {}, "logged": {} },
  producers: {
    fill: {
      publishes: ["item"],
      schedule: { interval: "1h" },
      handler: async () => ({}),
    },
  },
  consumers: {
    a: Keep.consumer({
      subscribe: ["item"],
      publishes: ["logged"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("item", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "item", ids: [ev.messageId] }],
          data: { id: ev.messageId, line: ev.messageId + "," + ev.payload.n + "\n" },
          ui: { title: "Log " + ev.messageId },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "a.csv", content: prepared.data.line });
      },
      async next(ctx, prepared, result) {
        if (result.status === "applied") {
          await ctx.publish("logged", { messageId: prepared.data.id, payload: { id: prepared.data.id } });
        }
        return { last: result.status };
      },
    }),
    b: Keep.consumer({
      subscribe: ["logged"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("logged", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "logged", ids: [ev.messageId] }],
          data: { line: ev.payload.id + "\n" },
          ui: { title: "Receipt " + ev.payload.id },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "b.csv", content: prepared.data.line });
      },
      async next() {},
    }),
  },
});
`

// newPipeline builds the pipeline with n events waiting for consumer A: the
// producer has run (and committed) and the consumers have just arrived, so
// the next Drain is consumer runs only.
func newPipeline(ctx context.Context, dir string, n int) (*keepEngine, error) {
	k, err := newEngine(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := k.deploy(ctx, "pipeline", fmt.Sprintf(pipelineProducer, n)); err != nil {
		k.close()
		return nil, err
	}
	if err := k.e.Drain(ctx); err != nil {
		k.close()
		return nil, err
	}
	w, err := k.db.Read().WorkflowByName(ctx, "pipeline")
	if err != nil {
		k.close()
		return nil, err
	}
	evs, err := k.db.Read().Peek(ctx, w.ID, "item", n+1)
	if err != nil {
		k.close()
		return nil, err
	}
	if len(evs) != n {
		k.close()
		return nil, fmt.Errorf("%d events pending after the producer, want %d", len(evs), n)
	}
	if err := k.deploy(ctx, "pipeline", pipelineConsumers); err != nil {
		k.close()
		return nil, err
	}
	return k, nil
}

// checkPipeline verifies that every item went through both consumers.
func checkPipeline(k *keepEngine, n int) error {
	for _, f := range []string{"a.csv", "b.csv"} {
		data, err := os.ReadFile(filepath.Join(k.root, f))
		if err != nil {
			return err
		}
		if got := strings.Count(string(data), "\n"); got != n {
			return fmt.Errorf("%s has %d lines, want %d", f, got, n)
		}
	}
	return nil
}

// consumerRuns counts the consumer runs recorded, and of them the ones
// that reserved an event (the others found nothing left and closed).
func consumerRuns(ctx context.Context, path string) (all, working int, err error) {
	db, err := sql.Open("sqlite", storage.FileURI(path)+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT r.run_id) FROM runs
		LEFT JOIN reservations r ON r.run_id = runs.id WHERE runs.handler_type = 'consumer'`).Scan(&all, &working)
	return all, working, err
}

// pipeline times the consumer runs of the two-stage workflow over o.Inputs
// inputs: 2 × o.Inputs runs, each a durable ledger entry around a local
// file append.
func pipeline(ctx context.Context, o Options, r *Results) error {
	n := o.Inputs
	t := time.Now()
	k, err := newPipeline(ctx, o.Dir, n)
	if err != nil {
		return err
	}
	defer k.close()
	o.Logf("pipeline: %d inputs produced in %s; draining the consumers", n, time.Since(t).Round(time.Millisecond))
	start := time.Now()
	if err := k.e.Drain(ctx); err != nil {
		return err
	}
	el := time.Since(start)
	if err := checkPipeline(k, n); err != nil {
		return err
	}
	all, working, err := consumerRuns(ctx, k.path)
	if err != nil {
		return err
	}
	if working != 2*n {
		return fmt.Errorf("%d consumer runs reserved an event, want %d", working, 2*n)
	}
	r.PipelineConsumerRuns = working
	r.PipelineSeconds = el.Seconds()
	r.PipelineRunsPerS = float64(working) / el.Seconds()
	o.Logf("pipeline: %d consumer runs (+%d that found nothing) in %s: %.0f runs/s", working, all-working, el.Round(time.Millisecond), r.PipelineRunsPerS)
	return nil
}

// commitsPerRunInputs is the pipeline size whose commits are counted: small
// enough that its WAL stays a few MB.
const commitsPerRunInputs = 100

// commitsPerRun counts keep's durable commits per consumer run from the
// database's write-ahead log: every committed write transaction ends with
// one frame whose "database size after commit" field is non-zero. A read
// transaction held open on a connection of our own keeps SQLite from
// restarting the log under us (a checkpoint can copy frames back, but it
// cannot reset the log while a reader still uses it), so the commits of the
// drain are the commit frames added to it; the salt check proves it.
func commitsPerRun(ctx context.Context, o Options, r *Results) error {
	n := min(o.Inputs, commitsPerRunInputs)
	k, err := newPipeline(ctx, o.Dir, n)
	if err != nil {
		return err
	}
	defer k.close()
	rdb, err := sql.Open("sqlite", storage.FileURI(k.path)+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer rdb.Close()
	hold, err := rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer hold.Rollback()
	var x int
	if err := hold.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&x); err != nil {
		return err
	}
	before, err := readWAL(k.path + "-wal")
	if err != nil {
		return err
	}
	syncedBefore, _ := k.db.Commits()
	if err := k.e.Drain(ctx); err != nil {
		return err
	}
	syncedAfter, _ := k.db.Commits()
	after, err := readWAL(k.path + "-wal")
	if err != nil {
		return err
	}
	hold.Rollback()
	if after.salt != before.salt {
		return errors.New("the WAL was restarted during the drain; its commits cannot be counted")
	}
	if err := checkPipeline(k, n); err != nil {
		return err
	}
	all, working, err := consumerRuns(ctx, k.path)
	if err != nil {
		return err
	}
	commits := after.commits - before.commits
	r.CommitsPerRun = float64(commits) / float64(working)
	r.CommitsPerRunSource = "wal"
	r.SyncedCommitsPerRun = float64(syncedAfter-syncedBefore) / float64(working)
	r.FramesPerRun = float64(after.frames-before.frames) / float64(working)
	o.Logf("commits per run: %d commits (%d synced, %d WAL frames) for %d consumer runs (+%d that found nothing): %.2f per run",
		commits, syncedAfter-syncedBefore, after.frames-before.frames, working, all-working, r.CommitsPerRun)
	return nil
}

type walState struct {
	salt    [2]uint32
	frames  int
	commits int
}

// readWAL walks a write-ahead log: a 32-byte header (magic, version, page
// size, checkpoint sequence, salt-1, salt-2, checksums), then frames of a
// 24-byte header (page number, database size after commit — non-zero on
// the last frame of a transaction —, salt-1, salt-2, checksums) and a page.
// Frames whose salt differs from the header's are left over from before
// the log was last restarted and end the walk.
func readWAL(path string) (walState, error) {
	var st walState
	f, err := os.Open(path)
	if err != nil {
		return st, err
	}
	defer f.Close()
	hdr := make([]byte, 32)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return st, fmt.Errorf("WAL header: %w", err)
	}
	if magic := binary.BigEndian.Uint32(hdr); magic != 0x377f0682 && magic != 0x377f0683 {
		return st, fmt.Errorf("WAL magic %#x", magic)
	}
	pageSize := int64(binary.BigEndian.Uint32(hdr[8:]))
	st.salt = [2]uint32{binary.BigEndian.Uint32(hdr[16:]), binary.BigEndian.Uint32(hdr[20:])}
	fh := make([]byte, 24)
	for off := int64(32); ; off += 24 + pageSize {
		if _, err := f.ReadAt(fh, off); err != nil {
			break // end of file (a partial frame is not a frame)
		}
		if binary.BigEndian.Uint32(fh[8:]) != st.salt[0] || binary.BigEndian.Uint32(fh[12:]) != st.salt[1] {
			break
		}
		st.frames++
		if binary.BigEndian.Uint32(fh[4:]) != 0 {
			st.commits++
		}
	}
	return st, nil
}
