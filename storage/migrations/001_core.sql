-- The core model of DESIGN.md §7.0. Times are Unix milliseconds (UTC).

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE workflows (
	id           INTEGER PRIMARY KEY,
	name         TEXT NOT NULL UNIQUE,
	-- the user's status; only the user sets it
	status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
	-- the engine's block; only the engine sets it. '' means unblocked.
	block_kind   TEXT NOT NULL DEFAULT '' CHECK (block_kind IN ('', 'approval', 'reconciliation', 'repair', 'transient', 'internal')),
	block_reason TEXT NOT NULL DEFAULT '',
	block_run_id INTEGER,
	version      INTEGER NOT NULL DEFAULT 0,
	-- persisted so that limits hold across restarts
	transient_failures INTEGER NOT NULL DEFAULT 0,
	retry_at           INTEGER,
	repairs            INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);

CREATE TABLE script_versions (
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	version     INTEGER NOT NULL,
	label       TEXT NOT NULL,
	origin      TEXT NOT NULL CHECK (origin IN ('deploy', 'repair')),
	file_name   TEXT NOT NULL,
	source      TEXT NOT NULL,
	declaration TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (workflow_id, version)
);

CREATE TABLE topics (
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	name        TEXT NOT NULL,
	PRIMARY KEY (workflow_id, name)
) WITHOUT ROWID;

CREATE TABLE runs (
	id              INTEGER PRIMARY KEY,
	workflow_id     INTEGER NOT NULL REFERENCES workflows (id),
	handler         TEXT NOT NULL,
	handler_type    TEXT NOT NULL CHECK (handler_type IN ('producer', 'consumer')),
	script_version  INTEGER NOT NULL,
	retry_of        INTEGER REFERENCES runs (id),
	-- the mutation this run carries: its own, or the one it inherited as a
	-- retry after the mutation (chapter 16 phase reset: results are copied)
	mutation_id     INTEGER,
	trigger         TEXT NOT NULL DEFAULT '',
	phase           TEXT NOT NULL CHECK (phase IN ('preparing', 'prepared', 'mutating', 'mutated', 'emitting', 'committed')),
	status          TEXT NOT NULL CHECK (status IN ('active', 'paused:transient', 'paused:approval',
	                    'paused:reconciliation', 'failed:logic', 'failed:internal', 'committed', 'crashed')),
	prepare_result  TEXT,
	mutation_result TEXT,
	error           TEXT NOT NULL DEFAULT '',
	-- set when the run no longer owns its reservations and nothing waits on it
	-- (a newer run took over, or the user answered); NULL while it is an open matter
	closed_at       INTEGER,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);
CREATE INDEX runs_by_workflow ON runs (workflow_id, id);
CREATE INDEX runs_open ON runs (workflow_id) WHERE closed_at IS NULL;
-- chapter 06 principle 1, enforced by the database itself
CREATE UNIQUE INDEX runs_one_active ON runs (workflow_id) WHERE status = 'active';

CREATE TABLE inputs (
	id          INTEGER PRIMARY KEY,
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	source      TEXT NOT NULL,
	type        TEXT NOT NULL,
	external_id TEXT NOT NULL,
	title       TEXT NOT NULL,
	created_by  INTEGER REFERENCES runs (id),
	created_at  INTEGER NOT NULL,
	skipped_at  INTEGER,
	UNIQUE (workflow_id, source, type, external_id)
);
CREATE INDEX inputs_by_workflow ON inputs (workflow_id, id);

CREATE TABLE events (
	id          INTEGER PRIMARY KEY,
	workflow_id INTEGER NOT NULL,
	topic       TEXT NOT NULL,
	message_id  TEXT NOT NULL,
	payload     TEXT NOT NULL,
	status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'consumed', 'skipped')),
	reserved_by INTEGER REFERENCES runs (id),
	created_by  INTEGER REFERENCES runs (id),
	attempts    INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	UNIQUE (workflow_id, topic, message_id),
	FOREIGN KEY (workflow_id, topic) REFERENCES topics (workflow_id, name)
);
-- peek and the scheduler only ever look at open events: a partial index keeps
-- their cost independent of how many consumed events history holds
CREATE INDEX events_open ON events (workflow_id, topic, id) WHERE status = 'pending';
CREATE INDEX events_by_workflow ON events (workflow_id, id);
CREATE INDEX events_reserved ON events (reserved_by) WHERE reserved_by IS NOT NULL;

-- caused_by: event -> input, a join table (chapter 06a causal tracking)
CREATE TABLE event_causes (
	event_id INTEGER NOT NULL REFERENCES events (id),
	input_id INTEGER NOT NULL REFERENCES inputs (id),
	PRIMARY KEY (event_id, input_id)
) WITHOUT ROWID;
CREATE INDEX event_causes_by_input ON event_causes (input_id, event_id);

-- every reservation ever made: the link from an input to the mutations it
-- caused must survive retries and releases, so this is history, never updated
CREATE TABLE reservations (
	id         INTEGER PRIMARY KEY,
	run_id     INTEGER NOT NULL REFERENCES runs (id),
	event_id   INTEGER NOT NULL REFERENCES events (id),
	created_at INTEGER NOT NULL,
	UNIQUE (run_id, event_id)
);
CREATE INDEX reservations_by_event ON reservations (event_id, run_id);
CREATE TRIGGER reservations_no_update BEFORE UPDATE ON reservations
BEGIN SELECT RAISE(ABORT, 'reservations are append-only'); END;
CREATE TRIGGER reservations_no_delete BEFORE DELETE ON reservations
BEGIN SELECT RAISE(ABORT, 'reservations are append-only'); END;

CREATE TABLE handler_state (
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	handler     TEXT NOT NULL,
	state       TEXT,
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (workflow_id, handler)
) WITHOUT ROWID;

-- producers' next_run_at and consumers' wakeAt (chapter 16 persisted state)
CREATE TABLE schedules (
	workflow_id  INTEGER NOT NULL REFERENCES workflows (id),
	handler      TEXT NOT NULL,
	handler_type TEXT NOT NULL CHECK (handler_type IN ('producer', 'consumer')),
	next_run_at  INTEGER,
	wake_at      INTEGER,
	PRIMARY KEY (workflow_id, handler)
) WITHOUT ROWID;

CREATE TABLE mutations (
	id              INTEGER PRIMARY KEY,
	run_id          INTEGER NOT NULL UNIQUE REFERENCES runs (id),
	workflow_id     INTEGER NOT NULL REFERENCES workflows (id),
	connector       TEXT NOT NULL,
	method          TEXT NOT NULL,
	params          TEXT NOT NULL,
	preview         TEXT NOT NULL DEFAULT '',
	ui_title        TEXT NOT NULL DEFAULT '',
	idempotency_key TEXT NOT NULL UNIQUE,
	status          TEXT NOT NULL CHECK (status IN ('awaiting_approval', 'in_flight', 'applied', 'failed',
	                    'needs_reconcile', 'indeterminate', 'skipped')),
	result          TEXT,
	error           TEXT NOT NULL DEFAULT '',
	resolved_by     TEXT NOT NULL DEFAULT '' CHECK (resolved_by IN ('', 'host', 'reconciler', 'user')),
	attempts           INTEGER NOT NULL DEFAULT 0,
	reconcile_attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at    INTEGER,
	-- the deferred bus event that announces the prompt again (0: none)
	reminder_id        INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);
CREATE INDEX mutations_by_workflow ON mutations (workflow_id, id);
CREATE INDEX mutations_open ON mutations (status) WHERE status IN ('awaiting_approval', 'in_flight', 'needs_reconcile', 'indeterminate');

-- the user's answers: history, one row per answer
CREATE TABLE answers (
	id          INTEGER PRIMARY KEY,
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	subject     TEXT NOT NULL,
	subject_id  INTEGER NOT NULL,
	answer      TEXT NOT NULL,
	answered_by TEXT NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE INDEX answers_by_subject ON answers (subject, subject_id);

CREATE TABLE run_traces (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id),
	at          INTEGER NOT NULL,
	phase       TEXT NOT NULL,
	kind        TEXT NOT NULL CHECK (kind IN ('call', 'log', 'note')),
	connector   TEXT NOT NULL DEFAULT '',
	method      TEXT NOT NULL DEFAULT '',
	args        TEXT NOT NULL DEFAULT '',
	result      TEXT NOT NULL DEFAULT '',
	duration_ms INTEGER NOT NULL DEFAULT 0,
	error       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX run_traces_by_run ON run_traces (run_id, id);

CREATE TABLE grants (
	id          INTEGER PRIMARY KEY,
	workflow_id INTEGER NOT NULL REFERENCES workflows (id),
	capability  TEXT NOT NULL,
	scope       TEXT NOT NULL DEFAULT '',
	mode        TEXT NOT NULL CHECK (mode IN ('allow', 'ask', 'deny')),
	daily_limit INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	UNIQUE (workflow_id, capability, scope)
);
