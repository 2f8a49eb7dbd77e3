package storage

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// Writes that arrive while another is being written are committed together
// (group commit): the first writer to find the writer free leads, takes
// every write queued by then and runs them one after another in one
// transaction, each inside a savepoint of its own, and commits once. A
// consumer that runs several runs at once pays one begin, one commit and
// one write of the pages they share (a table's last leaf, an index's)
// instead of one each. Each write still stands or falls alone: one whose
// fn fails is rolled back to its savepoint and the others commit; none
// returns before the commit that carries it, so none acts on a write that
// may not last. Nothing waits for time. While writes come in company (in
// the last few batches one queued behind a busy writer, or a batch carried
// more than one), a write that finds the writer free first yields its
// thread once, so the goroutines ready to run there — a concurrent
// consumer's other runs, on their way to their own writes — get to queue
// theirs and share its commit; then it starts. Writes that come alone start
// at once: a yield with a thread idle only moves the writer to it.

// writeReq is one write waiting in the queue or running in a batch.
type writeReq struct {
	ctx    context.Context
	synced bool
	fn     func(tx *Tx) error
	// wake is signalled once: either the write is done, or it is to lead
	// the next batch.
	wake chan struct{}

	// set by the leader before wake
	done     bool
	err      error
	after    []func()
	n        uint64 // the commit that carries it, in log order
	panicked any
}

func (r *writeReq) ok() bool { return r.err == nil && r.panicked == nil }

// companyBatches is how many batches after the last sign of company their
// leaders still yield: a yield that found nobody ready is not the end of a
// burst of concurrent writes.
const companyBatches = 8

// writeQueue holds the writes waiting for the writer.
type writeQueue struct {
	mu      sync.Mutex
	waiting []*writeReq
	busy    bool // a leader is writing
	// company counts down the batches still led as in company: set to
	// companyBatches when a write queues behind a busy writer or a batch
	// carries more than one
	company int
}

// enqueue adds r and says whether its caller leads (the writer was free).
func (q *writeQueue) enqueue(r *writeReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, r)
	if q.busy {
		q.company = companyBatches
		return false
	}
	q.busy = true
	return true
}

// inCompany says whether the next batch is led in company, and counts one
// batch down.
func (q *writeQueue) inCompany() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.company == 0 {
		return false
	}
	q.company--
	return true
}

// take empties the queue into a batch.
func (q *writeQueue) take() []*writeReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.waiting
	q.waiting = nil
	if len(batch) > 1 {
		q.company = companyBatches
	}
	return batch
}

// handOn wakes the first write queued meanwhile to lead the next batch, or
// frees the writer.
func (q *writeQueue) handOn() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	q.waiting[0].wake <- struct{}{}
}

// submit runs fn in the next commit and returns once that commit is
// written (not yet synced): its number, the hooks fn registered, and fn's
// or the commit's error.
func (db *DB) submit(ctx context.Context, synced bool, fn func(tx *Tx) error) (*writeReq, error) {
	r := &writeReq{ctx: ctx, synced: synced, fn: fn, wake: make(chan struct{}, 1)}
	if !db.queue.enqueue(r) {
		<-r.wake
	}
	if !r.done {
		db.lead()
	}
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r, r.err
}

// lead writes one batch: every write queued so far, the leader's own
// first. The others are woken once their commit is written; then the
// first write queued meanwhile leads the next.
func (db *DB) lead() {
	if db.queue.inCompany() {
		runtime.Gosched() // the writes ready to be made join this batch
	}
	batch := db.queue.take()
	db.wmu.Lock()
	db.writeBatch(batch)
	var n uint64
	if slices.ContainsFunc(batch, (*writeReq).ok) {
		n = db.disk.wrote()
		if db.logPages >= checkpointPages {
			db.checkpointLocked(context.WithoutCancel(batch[0].ctx), n)
		}
	}
	db.wmu.Unlock()
	for _, r := range batch {
		r.n = n
		r.done = true
	}
	// the leader's own write is first: it is not woken, it returns
	for _, r := range batch[1:] {
		r.wake <- struct{}{}
	}
	db.queue.handOn()
}

// writeBatch runs the batch's writes in one immediate transaction on the
// writer connection and commits what did not fail. The caller holds the
// writer lock.
func (db *DB) writeBatch(batch []*writeReq) {
	fail := func(err error) {
		for _, r := range batch {
			if r.ok() {
				r.err = err
			}
			r.after = nil
		}
	}
	// A write's context may end while others share its transaction: it
	// is checked before the write starts, not while it runs, so one
	// caller's cancel never rolls back another's write.
	ctx := context.WithoutCancel(batch[0].ctx)
	if db.closed {
		fail(db.closedError())
		return
	}
	wc := db.wc
	if _, err := wc.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		wc.rollback(ctx)
		fail(fmt.Errorf("storage: begin: %w", err))
		return
	}
	alone := len(batch) == 1
	kept := 0
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		tx := &Tx{tq: wc, db: db}
		tx.Q = Q{q: wc}
		if alone {
			// no savepoint: a failure rolls the whole transaction back
			if !r.run(tx) {
				wc.rollback(ctx)
				return
			}
			r.after = tx.after
			kept++
			continue
		}
		if _, err := wc.ExecContext(ctx, "SAVEPOINT batched"); err != nil {
			wc.rollback(ctx)
			fail(fmt.Errorf("storage: savepoint: %w", err))
			return
		}
		if !r.run(tx) {
			if _, err := wc.ExecContext(ctx, "ROLLBACK TO batched"); err != nil {
				// the failure ended the transaction itself (SQLite rolls
				// back on some errors): nothing of the batch stands
				wc.rollback(ctx)
				fail(fmt.Errorf("storage: a write committed with this one failed, taking the transaction: %w", err))
				return
			}
		} else {
			r.after = tx.after
			kept++
		}
		if _, err := wc.ExecContext(ctx, "RELEASE batched"); err != nil {
			wc.rollback(ctx)
			fail(fmt.Errorf("storage: release savepoint: %w", err))
			return
		}
	}
	if kept == 0 {
		wc.rollback(ctx)
		return
	}
	if _, err := wc.ExecContext(ctx, "COMMIT"); err != nil {
		wc.rollback(ctx)
		fail(fmt.Errorf("storage: commit: %w", err))
		return
	}
	db.countLogPages(wc.conn)
	for _, r := range batch {
		if !r.ok() {
			continue
		}
		if r.synced {
			db.syncedCommits.Add(1)
		} else {
			db.unsyncedCommits.Add(1)
		}
	}
}

// run runs the write's fn and says whether it succeeded. A panic is kept
// for the write's caller, which panics with it again in its own goroutine.
func (r *writeReq) run(tx *Tx) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			ok = false
		}
	}()
	r.err = r.fn(tx)
	return r.err == nil
}
