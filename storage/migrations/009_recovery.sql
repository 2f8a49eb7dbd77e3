-- Chapter 16 "Restart Recovery": on start a consumer is dirty only if its
-- topics hold pending events or it has not run since it was deployed.
-- unrun remembers the second across a restart: deploy sets it, the
-- consumer's first commit under that deploy clears it. A consumer that
-- never committed a run before this migration counts as not run yet.
ALTER TABLE schedules ADD COLUMN unrun INTEGER NOT NULL DEFAULT 0 CHECK (unrun IN (0, 1));
UPDATE schedules SET unrun = 1
	WHERE handler_type = 'consumer'
	AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.workflow_id = schedules.workflow_id
		AND r.handler = schedules.handler AND r.status = 'committed');
