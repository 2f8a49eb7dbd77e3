-- An answer is to one question. A mutation is asked about again when its
-- call is sent again (the person said it did not happen, or a check found
-- so) and is uncertain again: the same row, a new question. attempt is
-- the attempt of the call the answer was given to, so an answer to the
-- earlier question is neither applied to the later one (engine: refused)
-- nor read as its answer in the history. 0: a subject without attempts
-- (an event, an input, a workflow), or an answer recorded before this.
-- Adding a column rewrites no row: the append-only triggers (migration
-- 18) fire on none.
ALTER TABLE answers ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
