package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
)

// proxyHost is the Host of a run in a worker: every method is a call to the
// real Host in the host process, by name with JSON arguments (hostcalls.go),
// but a prepare's peek that what came with its job answers (prefetch.go),
// and a registerInput or a publish the host cannot refuse, which it is told
// (below).
type proxyHost struct {
	c     *workerConn
	pre   map[string][]Event // a prepare phase's prefetched peeks
	phase Phase
	// inputs are the ids registerInput returned in this phase
	inputs map[string]bool
	// told are the registrations and publishes not sent yet: they go with
	// the next call, or with the phase's end, in order; toldBytes is about
	// their size
	told      []toldCall
	toldBytes int
}

// toldMost bounds what a worker holds told: past it, the next registerInput
// or publish is a call that carries them, so a frame stays far under
// maxFrame however many a phase makes.
const toldMost = 1 << 20

// A publish costs a call only when the host might refuse it. Everything
// the host checks of a publish (its Publish) the facade has checked before
// it (topics among the handler's publishes, a messageId, an inputId in a
// producer and none in next), but one thing: that a producer's inputId
// names an input of this run or of the workflow. An inputId that
// registerInput returned in this phase does. Such a publish is told: it
// rides with the next frame to the host, which takes it before anything
// that follows it. A publish fails the run, it does not throw, so a
// refusal found then (the host's rules and these parted) fails the run as
// it would have, only later, and nothing outside sees the difference:
// what a run publishes counts only at its commit.
func (p *proxyHost) tells(ev PublishRequest) bool {
	switch p.phase {
	case PhaseNext:
		return true
	case PhaseProducer:
		return p.inputs[ev.InputID]
	}
	return false
}

func (p *proxyHost) call(ctx context.Context, name hostCallName, args any) (json.RawMessage, error) {
	told := p.told
	p.told, p.toldBytes = nil, 0
	return p.c.call(ctx, name, args, told)
}

// tell holds t for the next frame, and says false, holding nothing, when
// what it holds is already at toldMost: the caller then calls.
func (p *proxyHost) tell(t toldCall) bool {
	if p.toldBytes >= toldMost {
		return false
	}
	p.told = append(p.told, t)
	p.toldBytes += t.size()
	return true
}

func (p *proxyHost) Read(ctx context.Context, connector, method string, params map[string]any) (any, error) {
	res, err := p.call(ctx, callRead, readArgs{connector, method, params})
	if err != nil {
		return nil, err
	}
	return res, nil // handed to the script as the JSON it is
}

// RegisterInput is told: its inputId is InputID of what it names, the
// same in the worker as in the host, so the script needs no answer. What
// the host checks of it (a source and type it knows) a refusal reports
// when the told call reaches it, failing the run as the call would have:
// a host's error ends a run, the script cannot catch it.
func (p *proxyHost) RegisterInput(ctx context.Context, in InputRequest) error {
	if p.inputs == nil {
		p.inputs = map[string]bool{}
	}
	p.inputs[InputID(in)] = true
	if p.tell(toldCall{Input: &in}) {
		return nil
	}
	_, err := p.call(ctx, callRegisterInput, in)
	return err
}

func (p *proxyHost) Publish(ctx context.Context, topics []string, ev PublishRequest) error {
	a := publishArgs{topics, ev.MessageID, ev.InputID, ev.Payload}
	if p.tells(ev) && p.tell(toldCall{Pub: a}) {
		return nil
	}
	_, err := p.call(ctx, callPublish, a)
	return err
}

func (p *proxyHost) Peek(ctx context.Context, topic string, limit int) ([]Event, error) {
	if evs, ok := prefetched(p.pre, topic, limit); ok {
		return evs, nil
	}
	return events(p.call(ctx, callPeek, peekArgs{Topic: topic, Limit: limit}))
}

func (p *proxyHost) GetByIDs(ctx context.Context, topic string, ids []string) ([]Event, error) {
	return events(p.call(ctx, callGetByIDs, peekArgs{Topic: topic, IDs: ids}))
}

func (p *proxyHost) Log(level, line string) {
	b, _ := json.Marshal(logArgs{level, line})
	p.c.send(&frame{Op: opLog, Args: b}) // one way: a log line has no answer
}

func events(res json.RawMessage, err error) ([]Event, error) {
	if err != nil {
		return nil, err
	}
	var evs []Event
	if err := json.Unmarshal(res, &evs); err != nil {
		return nil, fmt.Errorf("sandbox: decode events from the host: %w", err)
	}
	return evs, nil
}
