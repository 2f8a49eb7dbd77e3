-- An active run is open (an active run is never closed: the ledger refuses
-- the move), so runs_active held a subset of runs_open, and every run was
-- entered into and taken out of both: four index pages written per run
-- where two do. runs_open now carries handler and status, which the
-- scheduler's look-up of a workflow's active runs reads, and closed_at
-- (NULL in each of its entries): SQLite takes an index as covering only
-- when it holds every column a query names, its own condition's too.
DROP INDEX runs_active;
DROP INDEX runs_open;
CREATE INDEX runs_open ON runs (workflow_id, handler, status, closed_at) WHERE closed_at IS NULL;
