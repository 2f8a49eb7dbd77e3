-- Retention (keep gc) deletes a finished run only when nothing points at
-- it; these indexes make each "does anything point at it" a lookup.
CREATE INDEX events_created_by ON events (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX inputs_created_by ON inputs (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX runs_retry_of ON runs (retry_of) WHERE retry_of IS NOT NULL;
-- the runs that carry a mutation (an input's outputs, its attention state)
CREATE INDEX runs_by_mutation ON runs (mutation_id) WHERE mutation_id IS NOT NULL;
-- every open run of every workflow (keep attention), oldest first
CREATE INDEX runs_open_ids ON runs (id) WHERE closed_at IS NULL;

-- Counts for `keep status` without reading the history: inputs per
-- workflow and how many of them were skipped, kept by triggers in the same
-- transaction as the change, so no writer can forget them.
CREATE TABLE input_counts (
	workflow_id INTEGER PRIMARY KEY REFERENCES workflows (id),
	total       INTEGER NOT NULL DEFAULT 0,
	skipped     INTEGER NOT NULL DEFAULT 0
);
INSERT INTO input_counts(workflow_id, total, skipped)
	SELECT workflow_id, COUNT(*), COUNT(skipped_at) FROM inputs GROUP BY workflow_id;

-- An input no event names yet counts as pending; it leaves this table when
-- its first event is published.
CREATE TABLE uncaused_inputs (
	input_id    INTEGER PRIMARY KEY,
	workflow_id INTEGER NOT NULL
);
CREATE INDEX uncaused_inputs_by_workflow ON uncaused_inputs (workflow_id);
INSERT INTO uncaused_inputs(input_id, workflow_id)
	SELECT i.id, i.workflow_id FROM inputs i WHERE NOT EXISTS (SELECT 1 FROM event_causes c WHERE c.input_id = i.id);

-- An upsert that finds the input already there runs the UPDATE triggers,
-- not this one, so a repeated registration is not counted twice.
CREATE TRIGGER inputs_count_insert AFTER INSERT ON inputs
BEGIN
	INSERT INTO input_counts(workflow_id, total, skipped) VALUES (NEW.workflow_id, 1, NEW.skipped_at IS NOT NULL)
		ON CONFLICT(workflow_id) DO UPDATE SET total = total + 1, skipped = skipped + (NEW.skipped_at IS NOT NULL);
	INSERT INTO uncaused_inputs(input_id, workflow_id) VALUES (NEW.id, NEW.workflow_id) ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER inputs_count_skip AFTER UPDATE OF skipped_at ON inputs
	WHEN (OLD.skipped_at IS NULL) <> (NEW.skipped_at IS NULL)
BEGIN
	UPDATE input_counts SET skipped = skipped + (CASE WHEN NEW.skipped_at IS NULL THEN -1 ELSE 1 END)
		WHERE workflow_id = NEW.workflow_id;
END;
CREATE TRIGGER inputs_count_delete AFTER DELETE ON inputs
BEGIN
	UPDATE input_counts SET total = total - 1, skipped = skipped - (OLD.skipped_at IS NOT NULL)
		WHERE workflow_id = OLD.workflow_id;
	DELETE FROM uncaused_inputs WHERE input_id = OLD.id;
END;
CREATE TRIGGER event_causes_uncaused AFTER INSERT ON event_causes
BEGIN
	DELETE FROM uncaused_inputs WHERE input_id = NEW.input_id;
END;

-- Outputs per workflow, connector and status, kept the same way.
CREATE TABLE mutation_counts (
	workflow_id INTEGER NOT NULL,
	connector   TEXT NOT NULL,
	status      TEXT NOT NULL,
	n           INTEGER NOT NULL,
	PRIMARY KEY (workflow_id, connector, status)
) WITHOUT ROWID;
INSERT INTO mutation_counts(workflow_id, connector, status, n)
	SELECT workflow_id, connector, status, COUNT(*) FROM mutations GROUP BY 1, 2, 3;
CREATE TRIGGER mutations_count_insert AFTER INSERT ON mutations
BEGIN
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER mutations_count_update AFTER UPDATE OF status, connector, workflow_id ON mutations
	WHEN OLD.status <> NEW.status OR OLD.connector <> NEW.connector OR OLD.workflow_id <> NEW.workflow_id
BEGIN
	UPDATE mutation_counts SET n = n - 1 WHERE workflow_id = OLD.workflow_id AND connector = OLD.connector AND status = OLD.status;
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
