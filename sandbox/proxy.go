package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
)

// proxyHost is the Host of a run in a worker: every method is a call to the
// real Host in the host process, by name with JSON arguments (hostcalls.go),
// but a prepare's peek that what came with its job answers (prefetch.go),
// and a publish the host cannot refuse, which it is told (below).
type proxyHost struct {
	c     *workerConn
	pre   map[string][]Event // a prepare phase's prefetched peeks
	phase Phase
	// inputs are the ids registerInput returned in this phase
	inputs map[string]bool
	// told are the publishes not sent yet: they go with the next call, or
	// with the phase's end, in order
	told []publishArgs
}

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
	p.told = nil
	return p.c.call(ctx, name, args, told)
}

func (p *proxyHost) Read(ctx context.Context, connector, method string, params map[string]any) (any, error) {
	res, err := p.call(ctx, callRead, readArgs{connector, method, params})
	if err != nil {
		return nil, err
	}
	return res, nil // handed to the script as the JSON it is
}

func (p *proxyHost) RegisterInput(ctx context.Context, in InputRequest) (string, error) {
	res, err := p.call(ctx, callRegisterInput, in)
	if err != nil {
		return "", err
	}
	var id string
	if err := json.Unmarshal(res, &id); err != nil {
		return "", err
	}
	if p.inputs == nil {
		p.inputs = map[string]bool{}
	}
	p.inputs[id] = true
	return id, nil
}

func (p *proxyHost) Publish(ctx context.Context, topics []string, ev PublishRequest) error {
	a := publishArgs{topics, ev.MessageID, ev.InputID, ev.Payload}
	if p.tells(ev) {
		p.told = append(p.told, a)
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
