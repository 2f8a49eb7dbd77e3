package storage

// A page of a workflow's inputs or runs, read by id through the table's
// (workflow_id, id) index from either end: newest first below a bound, or
// oldest first above one (the caller reverses it, so every page it hands on
// is newest first). filterCol LIKE '%filter%' narrows it when filter is set.
type page struct {
	table, cols, filterCol string
}

var (
	inputsPage = page{table: "inputs", cols: inputCols, filterCol: "title"}
	runsPage   = page{table: "runs", cols: runCols, filterCol: "handler"}
)

// noBound stands for "no upper bound" on ids.
const noBound = 1<<62 - 1

// before is the query for the limit rows just below before (0: the newest).
func (p page) before(workflowID, before int64, limit int, filter string) (string, []any) {
	if before <= 0 {
		before = noBound
	}
	return p.query(`id < ?`, `ORDER BY id DESC`, filter, workflowID, before, limit)
}

// after is the query for the limit rows just above after (0: the oldest)
// and below before (0: no bound), oldest first.
func (p page) after(workflowID, after, before int64, limit int, filter string) (string, []any) {
	if before <= 0 {
		before = noBound
	}
	return p.query(`id > ? AND id < ?`, `ORDER BY id`, filter, workflowID, after, before, limit)
}

func (p page) query(bounds, order, filter string, workflowID any, rest ...any) (string, []any) {
	query := `SELECT ` + p.cols + ` FROM ` + p.table + ` WHERE workflow_id = ? AND ` + bounds
	args := append([]any{workflowID}, rest[:len(rest)-1]...)
	if filter != "" {
		query += ` AND ` + p.filterCol + ` LIKE ?`
		args = append(args, "%"+filter+"%")
	}
	return query + ` ` + order + ` LIMIT +?`, append(args, rest[len(rest)-1])
}
