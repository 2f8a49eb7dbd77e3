-- proposals.run_id, the run a repair was made for, was the one link to a
-- run no foreign key declared, and retention, which keeps a run anything
-- points at, did not look at it: a run a repair proposal named could be
-- deleted, and its id, once the newest, made again for another run. The
-- column now references runs like every other link to a run, so the
-- database refuses to lose one, and retention keeps the run (it looks
-- through proposals_by_run). Only a constraint is added: the stored schema
-- is edited in place, as migrations 3 and 15 did; the link of a proposal
-- whose run an earlier gc deleted names nothing, and is cleared first.
UPDATE proposals SET run_id = NULL
	WHERE run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = proposals.run_id);
CREATE INDEX proposals_by_run ON proposals (run_id) WHERE run_id IS NOT NULL;
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, '	run_id        INTEGER,', '	run_id        INTEGER REFERENCES runs (id),')
 WHERE type = 'table' AND name = 'proposals';
PRAGMA writable_schema = OFF;
