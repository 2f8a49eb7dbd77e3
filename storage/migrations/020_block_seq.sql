-- A block is one question to the person (retry? resume?), and a workflow
-- is asked many: run 41 fails, is retried, and later run 57 fails, or a
-- credential is refused. An answer given to the first (a card drawn
-- before, a late socket call) must not be applied to the second. block_seq
-- numbers a workflow's blocks: every block set adds one, a lift adds
-- none, and it never goes back, so two blocks of a workflow never share a
-- number and a block keeps its number across restarts (it is this row's).
-- blocked_at is when the standing block was set: what an answer refused
-- as being to another block says the workflow waits on since.
-- answers.attempt (migration 19) holds, for subject 'workflow', the
-- block_seq of the block a retry or resume answered (0: a pause, which
-- answers no block, or an answer recorded before this).
ALTER TABLE workflows ADD COLUMN block_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN blocked_at INTEGER;
-- a block standing now is the first numbered; when it was set is not
-- known better than the row's last change
UPDATE workflows SET block_seq = 1, blocked_at = updated_at WHERE block_kind <> '';
