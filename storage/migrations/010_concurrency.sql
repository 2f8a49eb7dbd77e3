-- A consumer that declares concurrency: N holds up to N active runs at
-- once (DESIGN.md §15), so a workflow is no longer limited to one: the
-- engine enforces N. The index stays, for the scheduler's look-up of a
-- workflow's active runs, now by handler too (the count against N).
DROP INDEX runs_one_active;
CREATE INDEX runs_active ON runs (workflow_id, handler) WHERE status = 'active';
