package sandbox

import "context"

// Prefetcher is a Host that can say, before a prepare phase starts, what a
// peek would find then: the first PrefetchDepth pending events of each
// topic its consumer subscribes to. A phase in a worker answers its peeks
// from that when it can — a limit the prefetched events cover, or a topic
// with fewer pending than that, so all of them — and asks the host
// otherwise. The canonical prepare (peek one event, reserve it) then runs
// without a round trip between the processes. The answer is what a peek at
// the phase's start would have given: prepare changes nothing on the bus,
// and an event published meanwhile is one the phase might as well have
// peeked just before.
type Prefetcher interface {
	Prefetch(ctx context.Context, depth int) (map[string][]Event, error)
}

// PrefetchDepth is how many events of each topic go with a prepare phase to
// its worker. One: it answers the peek of one event, and bounds what is
// sent for nothing when a script peeks otherwise (payloads can be large).
const PrefetchDepth = 1

// prefetched answers a peek of limit events of topic from pre, if it can.
func prefetched(pre map[string][]Event, topic string, limit int) ([]Event, bool) {
	evs, ok := pre[topic]
	if !ok || (limit > len(evs) && len(evs) >= PrefetchDepth) {
		return nil, false
	}
	out := make([]Event, min(limit, len(evs)))
	copy(out, evs)
	return out, true
}
