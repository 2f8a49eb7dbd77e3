-- A grant's daily limit counts the workflow's calls of one capability in
-- the last day, in the transaction that writes a call's in_flight row
-- (engine/mutation.go): by this index it reads that day's calls only, where
-- mutations_by_workflow read the workflow's whole history (about 50 ms per
-- 100,000 calls, with the writer held).
CREATE INDEX mutations_by_capability ON mutations (workflow_id, connector, method, created_at);
