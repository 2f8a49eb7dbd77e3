-- History is appended, never overwritten (DESIGN.md §7.0). The
-- reservations have refused UPDATE and DELETE since migration 1; the
-- other history tables said so only in comments: the user's answers, the
-- causes of events (event → input: the inputs→outputs view reads them
-- through the reservations), the proposals and their one decision each
-- (migration 8). Now the database refuses it for them too, whoever asks.
-- Retention (storage/retention.go) deletes none of these rows, and moves
-- none of them (it moves runs and events only), so nothing is let through.
-- The triggers are on UPDATE and DELETE only: an INSERT, the hot path of
-- every item, runs none of them (nor does an upsert that does nothing).
CREATE TRIGGER answers_no_update BEFORE UPDATE ON answers
BEGIN SELECT RAISE(ABORT, 'answers are append-only'); END;
CREATE TRIGGER answers_no_delete BEFORE DELETE ON answers
BEGIN SELECT RAISE(ABORT, 'answers are append-only'); END;

CREATE TRIGGER event_causes_no_update BEFORE UPDATE ON event_causes
BEGIN SELECT RAISE(ABORT, 'event causes are append-only'); END;
CREATE TRIGGER event_causes_no_delete BEFORE DELETE ON event_causes
BEGIN SELECT RAISE(ABORT, 'event causes are append-only'); END;

CREATE TRIGGER proposal_decisions_no_update BEFORE UPDATE ON proposal_decisions
BEGIN SELECT RAISE(ABORT, 'proposal decisions are append-only'); END;
CREATE TRIGGER proposal_decisions_no_delete BEFORE DELETE ON proposal_decisions
BEGIN SELECT RAISE(ABORT, 'proposal decisions are append-only'); END;

CREATE TRIGGER proposals_no_update BEFORE UPDATE ON proposals
BEGIN SELECT RAISE(ABORT, 'proposals are append-only'); END;
CREATE TRIGGER proposals_no_delete BEFORE DELETE ON proposals
BEGIN SELECT RAISE(ABORT, 'proposals are append-only'); END;
