-- mutation_counts keeps only settled statuses. A call's row is written open
-- (in_flight, awaiting approval…) and settled later, and the counter of
-- each was written both times: its in_flight row's commit and its
-- outcome's, two counter writes a call (and a page each in the log) for
-- counts of open calls that mutations_open holds anyway, a few rows.
-- MutationCounts adds those from that index.
DROP TRIGGER mutations_count_insert;
DROP TRIGGER mutations_count_update;
DELETE FROM mutation_counts WHERE status IN ('awaiting_approval', 'in_flight', 'needs_reconcile', 'indeterminate');
CREATE TRIGGER mutations_count_insert AFTER INSERT ON mutations
	WHEN NEW.status NOT IN ('awaiting_approval', 'in_flight', 'needs_reconcile', 'indeterminate')
BEGIN
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER mutations_count_leave AFTER UPDATE OF status, connector, workflow_id ON mutations
	WHEN (OLD.status <> NEW.status OR OLD.connector <> NEW.connector OR OLD.workflow_id <> NEW.workflow_id)
		AND OLD.status NOT IN ('awaiting_approval', 'in_flight', 'needs_reconcile', 'indeterminate')
BEGIN
	UPDATE mutation_counts SET n = n - 1 WHERE workflow_id = OLD.workflow_id AND connector = OLD.connector AND status = OLD.status;
END;
CREATE TRIGGER mutations_count_enter AFTER UPDATE OF status, connector, workflow_id ON mutations
	WHEN (OLD.status <> NEW.status OR OLD.connector <> NEW.connector OR OLD.workflow_id <> NEW.workflow_id)
		AND NEW.status NOT IN ('awaiting_approval', 'in_flight', 'needs_reconcile', 'indeterminate')
BEGIN
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
