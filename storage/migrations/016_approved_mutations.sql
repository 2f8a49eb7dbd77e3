-- The open mutations (OpenMutations: the attention list, and the calls a
-- new grant releases) are those waiting on someone: awaiting approval,
-- approved and not sent yet, in flight, to reconcile, indeterminate. The
-- index of open mutations holds all but the approved ones (the counters'
-- triggers count those as settled, migration 13), so the query for them
-- read the whole mutation ledger. The approved ones get their own partial
-- index: a mutation the host sends without asking never enters it, so an
-- item of an allowed call writes no page of it.
CREATE INDEX mutations_approved ON mutations (id) WHERE status = 'approved';
