-- Proposals (DESIGN.md §15): a new script a repair, a model over MCP or
-- `keep edit --propose` offers; the person accepts or rejects it. Both
-- tables are history: a proposal row is never changed, and its one decision
-- (accepted, rejected, or refused by keep before anyone saw it) is a row of
-- its own, so a second answer to the same proposal is refused by the key.
CREATE TABLE proposals (
	id            INTEGER PRIMARY KEY,
	-- the workflow it changes; NULL for a file that is not deployed yet
	workflow_id   INTEGER REFERENCES workflows (id),
	workflow_name TEXT NOT NULL,
	-- the version it was made against (0: none)
	base_version  INTEGER NOT NULL DEFAULT 0,
	origin        TEXT NOT NULL CHECK (origin IN ('repair', 'mcp', 'edit')),
	reason        TEXT NOT NULL DEFAULT '',
	file_name     TEXT NOT NULL,
	source        TEXT NOT NULL,
	diff          TEXT NOT NULL DEFAULT '',
	-- JSON: what it uses and what it adds; and the dry run's report
	summary       TEXT NOT NULL DEFAULT '{}',
	dry_run       TEXT NOT NULL DEFAULT 'null',
	-- the run a repair was made for (its retry follows an accept)
	run_id        INTEGER,
	created_at    INTEGER NOT NULL
);
CREATE INDEX proposals_by_workflow ON proposals (workflow_name, id);

CREATE TABLE proposal_decisions (
	proposal_id INTEGER PRIMARY KEY REFERENCES proposals (id),
	decision    TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected', 'refused')),
	-- who decided: "user", or "keep" for a repair refused outright
	decided_by  TEXT NOT NULL,
	why         TEXT NOT NULL DEFAULT '',
	-- the script version an accept made
	version     INTEGER,
	decided_at  INTEGER NOT NULL
);
