package storage

// StatusWriters names every method that writes a status: a run's status or
// phase, a mutation's status, a workflow's status or block, an event's
// consumed/skipped status (a row inserted is born with one). Package
// engine/ledger is their only caller outside storage; a test there holds
// every other package to it, and TestStatusWritersListed here finds each
// such write in storage's SQL, so a new writer cannot be left off.
var StatusWriters = []string{
	"InsertRun", "UpdateRun",
	"InsertMutation", "UpdateMutation",
	"CreateWorkflow", "SetWorkflowStatus", "SetBlock",
	"Consume", "SkipEvent", "SkipEventsOfInput",
}
