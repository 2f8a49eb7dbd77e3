-- `x IN ('a', 'b', 'c')` with three or more constants builds a temporary
-- b-tree of the constants each time a statement evaluates it (EXPLAIN:
-- OpenEphemeral); two or fewer are compared one by one. Every CHECK, the
-- partial index and the triggers of the tables an item writes (runs,
-- mutations, events, run traces) held such lists: about 21 b-trees built
-- an item. Each is rewritten as the same comparisons joined by OR, which
-- means the same for every value, NULL included (the columns are NOT NULL
-- anyway), and builds nothing.
--
-- The index and the triggers are dropped and made again; the queries that
-- read the index name its condition in the same words (storage/counts.go),
-- as SQLite uses a partial index only for a query whose WHERE holds its
-- condition. The tables' CHECKs are edited in the stored schema in place,
-- as migration 3 did (SQLite "ALTER TABLE", §7, "making other kinds of
-- table schema changes"): a constraint every existing row satisfies, the
-- same one in other words, with nothing on disk to change, where the
-- twelve-step rebuild would copy every run, event and mutation of the
-- history.
DROP INDEX mutations_open;
CREATE INDEX mutations_open ON mutations (status)
	WHERE status = 'awaiting_approval' OR status = 'in_flight' OR status = 'needs_reconcile' OR status = 'indeterminate';

DROP TRIGGER mutations_count_insert;
DROP TRIGGER mutations_count_leave;
DROP TRIGGER mutations_count_enter;
CREATE TRIGGER mutations_count_insert AFTER INSERT ON mutations
	WHEN NOT (NEW.status = 'awaiting_approval' OR NEW.status = 'in_flight' OR NEW.status = 'needs_reconcile' OR NEW.status = 'indeterminate')
BEGIN
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER mutations_count_leave AFTER UPDATE OF status, connector, workflow_id ON mutations
	WHEN (OLD.status <> NEW.status OR OLD.connector <> NEW.connector OR OLD.workflow_id <> NEW.workflow_id)
		AND NOT (OLD.status = 'awaiting_approval' OR OLD.status = 'in_flight' OR OLD.status = 'needs_reconcile' OR OLD.status = 'indeterminate')
BEGIN
	UPDATE mutation_counts SET n = n - 1 WHERE workflow_id = OLD.workflow_id AND connector = OLD.connector AND status = OLD.status;
END;
CREATE TRIGGER mutations_count_enter AFTER UPDATE OF status, connector, workflow_id ON mutations
	WHEN (OLD.status <> NEW.status OR OLD.connector <> NEW.connector OR OLD.workflow_id <> NEW.workflow_id)
		AND NOT (NEW.status = 'awaiting_approval' OR NEW.status = 'in_flight' OR NEW.status = 'needs_reconcile' OR NEW.status = 'indeterminate')
BEGIN
	INSERT INTO mutation_counts(workflow_id, connector, status, n) VALUES (NEW.workflow_id, NEW.connector, NEW.status, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;

PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''active'', ''paused'', ''archived''))',
	'CHECK (status = ''active'' OR status = ''paused'' OR status = ''archived'')')
 WHERE type = 'table' AND name = 'workflows';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (block_kind IN ('''', ''approval'', ''reconciliation'', ''repair'', ''transient'', ''internal'', ''auth'', ''permission''))',
	'CHECK (block_kind = '''' OR block_kind = ''approval'' OR block_kind = ''reconciliation'' OR block_kind = ''repair'' OR block_kind = ''transient'' OR block_kind = ''internal'' OR block_kind = ''auth'' OR block_kind = ''permission'')')
 WHERE type = 'table' AND name = 'workflows';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (phase IN (''preparing'', ''prepared'', ''mutating'', ''mutated'', ''emitting'', ''committed''))',
	'CHECK (phase = ''preparing'' OR phase = ''prepared'' OR phase = ''mutating'' OR phase = ''mutated'' OR phase = ''emitting'' OR phase = ''committed'')')
 WHERE type = 'table' AND name = 'runs';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''pending'', ''consumed'', ''skipped''))',
	'CHECK (status = ''pending'' OR status = ''consumed'' OR status = ''skipped'')')
 WHERE type = 'table' AND name = 'events';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (resolved_by IN ('''', ''host'', ''reconciler'', ''user''))',
	'CHECK (resolved_by = '''' OR resolved_by = ''host'' OR resolved_by = ''reconciler'' OR resolved_by = ''user'')')
 WHERE type = 'table' AND name = 'mutations';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (kind IN (''call'', ''log'', ''note''))',
	'CHECK (kind = ''call'' OR kind = ''log'' OR kind = ''note'')')
 WHERE type = 'table' AND name = 'run_traces';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (mode IN (''allow'', ''ask'', ''deny''))',
	'CHECK (mode = ''allow'' OR mode = ''ask'' OR mode = ''deny'')')
 WHERE type = 'table' AND name = 'grants';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''pending'', ''processing'', ''done'', ''failed''))',
	'CHECK (status = ''pending'' OR status = ''processing'' OR status = ''done'' OR status = ''failed'')')
 WHERE type = 'table' AND name = 'event_journal';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''scheduled'', ''fired'', ''cancelled''))',
	'CHECK (status = ''scheduled'' OR status = ''fired'' OR status = ''cancelled'')')
 WHERE type = 'table' AND name = 'deferred_events';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (origin IN (''repair'', ''mcp'', ''edit''))',
	'CHECK (origin = ''repair'' OR origin = ''mcp'' OR origin = ''edit'')')
 WHERE type = 'table' AND name = 'proposals';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (decision IN (''accepted'', ''rejected'', ''refused''))',
	'CHECK (decision = ''accepted'' OR decision = ''rejected'' OR decision = ''refused'')')
 WHERE type = 'table' AND name = 'proposal_decisions';
-- these two lists were written on two lines (a newline, a tab, 20 spaces)
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''active'', ''paused:transient'', ''paused:approval'',' || char(10, 9) || '                    ''paused:reconciliation'', ''failed:logic'', ''failed:internal'', ''committed'', ''crashed''))',
	'CHECK (status = ''active'' OR status = ''paused:transient'' OR status = ''paused:approval'' OR status = ''paused:reconciliation'' OR status = ''failed:logic'' OR status = ''failed:internal'' OR status = ''committed'' OR status = ''crashed'')')
 WHERE type = 'table' AND name = 'runs';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (status IN (''awaiting_approval'', ''approved'', ''in_flight'', ''applied'', ''failed'',' || char(10, 9) || '                    ''needs_reconcile'', ''indeterminate'', ''skipped''))',
	'CHECK (status = ''awaiting_approval'' OR status = ''approved'' OR status = ''in_flight'' OR status = ''applied'' OR status = ''failed'' OR status = ''needs_reconcile'' OR status = ''indeterminate'' OR status = ''skipped'')')
 WHERE type = 'table' AND name = 'mutations';
PRAGMA writable_schema = OFF;
