package engine

import (
	"bytes"
	"context"
	"slices"
	"time"

	"keep/sandbox"
	"keep/storage"
)

// A concurrent consumer's prepares run one at a time, each on the queue as
// the runs before it left it (concurrent.go), and each step waited for its
// prepare's answer and its run's start record before the next could start.
// On Node-RED's job that was most of a step (about 0.9 ms for the answer,
// which waits in the pipe until the engine's one thread has nothing else to
// run and looks, and 0.6 ms for the record to join a commit) while the
// engine's thread was a third idle. So a step hands its run off without
// waiting for the start record (startRecord, below), and the step that
// starts a run's prepare also starts the next run's, ahead, on the queue as
// it will be if this run reserves what its prepare is offered first. The next
// step takes the prepare ahead only if what it read is what that step
// reads now: the same handler state and the same events offered, and no
// read of keep's database of its own (host.store: a peek past the
// prefetch, an event by id, whatever a host call reads there). Then its outcome is the one a prepare started now would reach,
// and it is used; otherwise it is dropped and the prepare runs again. A
// prepare only reads, and mutate's call is only captured, never made, so a
// dropped one did nothing; its log lines go with it.

// aheadMaxAge is how long a prepare ahead may wait for its step: its
// connector reads, if it made any, are that old when taken.
const aheadMaxAge = 250 * time.Millisecond

// prepareAhead is a prepare started for the run after the one being
// started.
type prepareAhead struct {
	p       *earlyPrepare
	h       *host // its prepare's: whether it read past its prefetch
	tr      *trace
	sc      *sandbox.Script
	state   []byte
	offered []int64 // the ids of the events it was offered, in order
	started time.Time
	at      time.Time // e.now() when it started: the run's start
}

// aheadOf is the knownState the run after this one will find if this run
// reserves what it is offered first: the same state, and the events that
// follow. nil when there is no event after those (the next run would find
// nothing to reserve) or the consumer reads more than one topic.
func aheadOf(st *knownState) *knownState {
	if st == nil || len(st.following) == 0 {
		return nil
	}
	topic := st.followingTopic
	pre := map[string][]sandbox.Event{topic: scriptEvents(st.following)}
	ids := pendingIDs{topic: make(map[string]int64, len(st.following))}
	for _, ev := range st.following {
		ids[topic][ev.MessageID] = ev.ID
	}
	return &knownState{state: st.state, prefetch: pre, pending: ids}
}

// startAhead starts the prepare of the run after this one, when c may have
// two more runs under way and the last prepares ahead were mostly taken.
func (e *Engine) startAhead(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, st *knownState) {
	next := aheadOf(st)
	if next == nil || c.Concurrency < ws.hand.count()+2 || !ws.aheadPays(c.Name) {
		return
	}
	a := &prepareAhead{tr: e.newTrace(), sc: sc, state: st.state, started: time.Now(), at: e.now()}
	for _, ev := range st.following {
		a.offered = append(a.offered, ev.ID)
	}
	ws.hand.wg.Add(1) // a stopping scheduler waits for it as for its runs
	a.p, a.h = e.startPrepareWith(ctx, w, sc, c, next, a.tr, claimsOf(ws, c), ws.hand.wg.Done)
	ws.mu.Lock()
	if ws.ahead == nil {
		ws.ahead = map[string]*prepareAhead{}
	}
	ws.ahead[c.Name] = a
	ws.mu.Unlock()
}

// takeAhead hands over the prepare ahead for the run starting now with st,
// when it is the prepare this run would start; nil when there is none that
// fits. A prepare ahead is taken once or dropped: either way it is gone.
func (e *Engine) takeAhead(ws *wfState, sc *sandbox.Script, c sandbox.Consumer, st *knownState) *prepareAhead {
	ws.mu.Lock()
	a := ws.ahead[c.Name]
	delete(ws.ahead, c.Name)
	ws.mu.Unlock()
	if a == nil {
		return nil
	}
	if a.fits(sc, st) {
		return a
	}
	ws.aheadMissed(c.Name)
	return nil
}

func (a *prepareAhead) fits(sc *sandbox.Script, st *knownState) bool {
	if a.sc != sc || st == nil || st.prefetch == nil || time.Since(a.started) > aheadMaxAge {
		return false
	}
	if !bytes.Equal(a.state, st.state) || len(st.prefetch) != 1 {
		return false
	}
	for topic, evs := range st.prefetch {
		ids := make([]int64, len(evs))
		for i, ev := range evs {
			ids[i] = st.pending[topic][ev.MessageID]
		}
		return slices.Equal(ids, a.offered)
	}
	return false
}

// read waits for the prepare's outcome and says whether it stands: its
// prepare read nothing of keep's database beyond what it was offered.
func (a *prepareAhead) read() bool {
	a.p.wait()
	return !a.h.ownReads.Load()
}

// aheadPays says whether prepares ahead of c are worth starting: a
// consumer whose prepare reads past what it is offered, or reserves
// something else, never has one taken, and each would be work thrown away.
func (ws *wfState) aheadPays(consumer string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	s := ws.aheadScore[consumer]
	return s.missed <= s.taken/4+2
}

func (ws *wfState) aheadTaken(consumer string) { ws.scoreAhead(consumer, 1, 0) }

func (ws *wfState) aheadMissed(consumer string) { ws.scoreAhead(consumer, 0, 1) }

func (ws *wfState) scoreAhead(consumer string, taken, missed int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.aheadScore == nil {
		ws.aheadScore = map[string]aheadScore{}
	}
	s := ws.aheadScore[consumer]
	s.taken += taken
	s.missed += missed
	ws.aheadScore[consumer] = s
}

// aheadScore counts a consumer's prepares ahead taken and dropped.
type aheadScore struct{ taken, missed int }

// startRecord is a concurrent consumer's run start record committing while
// the step goes on: the step needs the run's id (given before the record,
// storage.NewRunID), not its row, to hand the run off; the run's first
// write after it waits for it (wait). Until it has committed, the run
// counts among its consumer's active runs as one starting (hand.starting),
// so the steps meanwhile start no more runs than the concurrency allows.
type startRecord struct {
	done chan struct{}
	rec  *storage.Run // the copy of the run recorded
	err  error
}

// recordStart gives run its id and commits its start record from a copy,
// so the step may go on filling in the run meanwhile.
func (e *Engine) recordStart(ctx context.Context, ws *wfState, run *storage.Run) *startRecord {
	run.ID = e.db.NewRunID()
	rec := *run
	s := &startRecord{done: make(chan struct{}), rec: &rec}
	ws.hand.starting(run.ID, run.Handler)
	sandbox.Go(func() {
		defer close(s.done)
		if startRecording != nil {
			startRecording()
		}
		s.err = e.tStarted(context.WithoutCancel(ctx), s.rec)
		ws.hand.started(run.ID) // in the database now, or never
	})
	return s
}

// startRecording, when set (tests), is called before each start record
// recordStart commits.
var startRecording func()

// wait waits for the start record of run and says whether it committed;
// run is then as recorded. nil (a run whose record the step wrote itself)
// waits for nothing.
func (s *startRecord) wait(run *storage.Run) error {
	if s == nil {
		return nil
	}
	<-s.done
	if s.err == nil {
		run.RecordedAs(s.rec)
	}
	return s.err
}
