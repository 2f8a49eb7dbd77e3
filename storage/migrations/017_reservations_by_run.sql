-- The reservation history is kept in order of its key, (run_id, event_id),
-- with no rowid: a consumer's prepared checkpoint wrote three pages to the
-- log for its one reservation (the table's, its UNIQUE (run_id, event_id)
-- index's and reservations_by_event's), now two. No query reads the
-- reservation's id: each reads a run's reservations by run_id or an
-- event's by reservations_by_event, and the key holds both columns.
--
-- The history is copied once into the new table (each row satisfies the
-- key: it was UNIQUE), and the append-only triggers are made again on it.
CREATE TABLE reservations_by_run (
	run_id     INTEGER NOT NULL REFERENCES runs (id),
	event_id   INTEGER NOT NULL REFERENCES events (id),
	created_at INTEGER NOT NULL,
	PRIMARY KEY (run_id, event_id)
) WITHOUT ROWID;
INSERT INTO reservations_by_run (run_id, event_id, created_at)
	SELECT run_id, event_id, created_at FROM reservations ORDER BY run_id, event_id;
DROP TRIGGER reservations_no_update;
DROP TRIGGER reservations_no_delete;
DROP TABLE reservations;
ALTER TABLE reservations_by_run RENAME TO reservations;
CREATE INDEX reservations_by_event ON reservations (event_id, run_id);
CREATE TRIGGER reservations_no_update BEFORE UPDATE ON reservations
BEGIN SELECT RAISE(ABORT, 'reservations are append-only'); END;
CREATE TRIGGER reservations_no_delete BEFORE DELETE ON reservations
BEGIN SELECT RAISE(ABORT, 'reservations are append-only'); END;
