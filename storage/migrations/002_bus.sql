-- The event bus of DESIGN.md §9 (event-bus.md): a durable journal of
-- notifications and the deferred events that feed it. Times are Unix
-- milliseconds (UTC). Rows are never deleted, so every query the dispatch
-- loop runs is served by a partial index whose size is the open work, not
-- the history.

CREATE TABLE event_journal (
	id             INTEGER PRIMARY KEY,
	topic          TEXT NOT NULL CHECK (topic <> ''),
	-- who emitted it (an engine part or a connector); '' for the bus itself
	source         TEXT NOT NULL DEFAULT '',
	payload        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
	correlation_id TEXT NOT NULL DEFAULT '',
	status         TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'done', 'failed')),
	created_at     INTEGER NOT NULL,
	-- set when the event ends done or failed
	processed_at   INTEGER,
	error          TEXT NOT NULL DEFAULT ''
);
-- the dispatch loop's fetch (oldest pending first) and restart recovery
CREATE INDEX event_journal_pending ON event_journal (id) WHERE status = 'pending';
CREATE INDEX event_journal_processing ON event_journal (id) WHERE status = 'processing';
-- observability: what failed, and everything about one topic or one workflow
CREATE INDEX event_journal_failed ON event_journal (id) WHERE status = 'failed';
CREATE INDEX event_journal_by_topic ON event_journal (topic, id);
CREATE INDEX event_journal_by_correlation ON event_journal (correlation_id, id);

CREATE TABLE deferred_events (
	id             INTEGER PRIMARY KEY,
	topic          TEXT NOT NULL CHECK (topic <> ''),
	source         TEXT NOT NULL DEFAULT '',
	payload        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
	correlation_id TEXT NOT NULL DEFAULT '',
	fire_at        INTEGER NOT NULL,
	status         TEXT NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'fired', 'cancelled')),
	created_at     INTEGER NOT NULL,
	fired_at       INTEGER,
	-- the journal row this deferred event became when it fired
	event_id       INTEGER REFERENCES event_journal (id),
	CHECK ((status = 'fired') = (fired_at IS NOT NULL AND event_id IS NOT NULL))
);
-- the next due deferred event and the loop's timer: only scheduled rows
CREATE INDEX deferred_events_due ON deferred_events (fire_at, id) WHERE status = 'scheduled';
CREATE INDEX deferred_events_by_topic ON deferred_events (topic, id);
CREATE INDEX deferred_events_by_correlation ON deferred_events (correlation_id, id);
