package sheets

import (
	"context"
	"slices"
	"strings"

	"keep/connectors"
)

// rows reads a sheet: {spreadsheet, sheet} → {header, rows, count}. Rows are
// {column: text} objects without the hidden column, in file order.
func (c *Connector) rows(ctx context.Context, params map[string]any) (any, error) {
	loc, err := c.locate(params)
	if err != nil {
		return nil, err
	}
	t, err := c.load(ctx, loc)
	if err != nil {
		return nil, err
	}
	if !t.exists {
		return nil, connectors.Errorf(connectors.Logic, "no such sheet: %s", loc.label)
	}
	_, names := t.visible()
	header := make([]any, len(names))
	for i, n := range names {
		header[i] = n
	}
	rows := make([]any, len(t.records))
	for i, rec := range t.records {
		rows[i] = t.rowMap(rec)
	}
	return map[string]any{"header": header, "rows": rows, "count": int64(len(rows))}, nil
}

// appendRow adds a row: {spreadsheet, sheet, values | row, header} →
// {rowNumber, row}. rowNumber counts data rows from 1 (the header is not a
// row), so rows(...).rows[rowNumber-1] is the row.
func (c *Connector) appendRow(ctx context.Context, call connectors.Call) (any, error) {
	loc, err := c.locate(call.Params)
	if err != nil {
		return nil, err
	}
	values, hasValues, err := cellsParam(call.Params, "values")
	if err != nil {
		return nil, err
	}
	row, hasRow, err := cellMapParam(call.Params, "row")
	if err != nil {
		return nil, err
	}
	if hasValues == hasRow {
		return nil, connectors.Errorf(connectors.Logic, "give either values (a list, by position) or row (an object, by column)")
	}
	header, err := connectors.Strings(call.Params, "header")
	if err != nil {
		return nil, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.load(ctx, loc)
	if err != nil {
		return nil, err
	}
	// The same mutation run twice (a restart between rename and ledger
	// update) must not add a second row. Only the tag counts: a row that
	// holds the raw key (as an earlier keep wrote it, or as anyone could)
	// is left alone. Reconcile puts such a row to the person, so Do sees
	// one again only once they said the mutation didn't happen.
	if i := t.findKeepID(c.rowTag(call.IdempotencyKey)); i >= 0 {
		return t.result(i), nil
	}
	headerLen := len(t.header)
	if err := t.setHeader(loc, header, row); err != nil {
		return nil, err
	}
	idx, names := t.visible()
	rec := t.pad(nil)
	typedCells := map[int]any{}
	if hasValues {
		if len(values) > len(idx) {
			return nil, connectors.Errorf(connectors.Logic, "%d values for %d columns (%s)", len(values), len(idx), strings.Join(names, ", "))
		}
		raw, _ := connectors.List(call.Params["values"])
		for i, v := range values {
			rec[idx[i]] = t.in(v)
			if x, ok := typed(raw[i]); ok {
				typedCells[idx[i]] = x
			}
		}
	} else {
		raw, _ := call.Params["row"].(map[string]any)
		for _, name := range sortedKeys(row) {
			i := t.column(name)
			if i < 0 {
				return nil, errNoColumn(loc, name, names)
			}
			rec[i] = t.in(row[name])
			if x, ok := typed(raw[name]); ok {
				typedCells[i] = x
			}
		}
	}
	if call.IdempotencyKey != "" {
		if err := t.roomForKeepCol(loc); err != nil {
			return nil, err
		}
		t.ensureKeepCol()
		rec = t.pad(rec)
		rec[t.keepCol] = c.rowTag(call.IdempotencyKey)
	}
	t.records = append(t.records, rec)
	ch := change{row: len(t.records) - 1, appended: true, header: len(t.header) != headerLen, headerFrom: headerLen, typed: typedCells}
	if err := c.save(ctx, loc, t, &ch); err != nil {
		return nil, err
	}
	return t.result(ch.row), nil
}

// setHeader gives a new or empty sheet its header (the header param, else the
// row's columns sorted), and checks a header param against an existing one.
func (t *table) setHeader(loc location, header []string, row map[string]string) error {
	if len(t.header) > 0 {
		if header != nil {
			if _, names := t.visible(); !slices.Equal(names, header) {
				return connectors.Errorf(connectors.Logic, "%s already has the header %q, not %q", loc.label, names, header)
			}
		}
		return nil
	}
	if header == nil {
		header = sortedKeys(row)
	}
	if len(header) == 0 {
		return connectors.Errorf(connectors.Logic, "%s has no header yet: give header, or row", loc.label)
	}
	seen := map[string]bool{}
	for _, name := range header {
		if name == KeepIDColumn {
			return connectors.Errorf(connectors.Logic, "%s is a column keep reserves for itself", KeepIDColumn)
		}
		if seen[name] {
			return connectors.Errorf(connectors.Logic, "column %q appears twice in header", name)
		}
		seen[name] = true
	}
	t.header = make([]string, len(header))
	for i, name := range header {
		t.header[i] = t.in(name)
	}
	return nil
}

// updateRow changes the one row whose key column holds value:
// {spreadsheet, sheet, key, value, set} → {rowNumber, row}.
func (c *Connector) updateRow(ctx context.Context, call connectors.Call) (any, error) {
	loc, err := c.locate(call.Params)
	if err != nil {
		return nil, err
	}
	key, err := connectors.String(call.Params, "key", true)
	if err != nil {
		return nil, err
	}
	raw, ok := call.Params["value"]
	if !ok {
		return nil, connectors.Errorf(connectors.Logic, "value is required: the %s of the row to update", key)
	}
	value, err := cell(raw)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "value: %w", err)
	}
	set, _, err := cellMapParam(call.Params, "set")
	if err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return nil, connectors.Errorf(connectors.Logic, "set is required: an object of column: new value")
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.load(ctx, loc)
	if err != nil {
		return nil, err
	}
	if !t.exists {
		return nil, connectors.Errorf(connectors.Logic, "no such sheet: %s", loc.label)
	}
	// The tag only, as in appendRow.
	if i := t.findKeepID(c.rowTag(call.IdempotencyKey)); i >= 0 {
		return t.result(i), nil
	}
	_, names := t.visible()
	keyCol := t.column(key)
	if keyCol < 0 {
		return nil, errNoColumn(loc, key, names)
	}
	for name := range set {
		if t.column(name) < 0 {
			return nil, errNoColumn(loc, name, names)
		}
	}
	match := -1
	for i, rec := range t.records {
		if t.out(field(rec, keyCol)) != value {
			continue
		}
		if match >= 0 {
			return nil, connectors.Errorf(connectors.Logic,
				"%s has more than one row where %s is %q; updateRow needs a key column that names one row", loc.label, key, value)
		}
		match = i
	}
	if match < 0 {
		return nil, connectors.Errorf(connectors.Logic, "%s has no row where %s is %q", loc.label, key, value)
	}
	headerLen := len(t.header)
	if call.IdempotencyKey != "" {
		if err := t.roomForKeepCol(loc); err != nil {
			return nil, err
		}
		t.ensureKeepCol()
	}
	rec := t.pad(t.records[match])
	var cols []int
	typedCells := map[int]any{}
	rawSet, _ := call.Params["set"].(map[string]any)
	for name, v := range set {
		rec[t.column(name)] = t.in(v)
		cols = append(cols, t.column(name))
		if x, ok := typed(rawSet[name]); ok {
			typedCells[t.column(name)] = x
		}
	}
	if call.IdempotencyKey != "" {
		rec[t.keepCol] = c.rowTag(call.IdempotencyKey)
		cols = append(cols, t.keepCol)
	}
	t.records[match] = rec
	ch := change{row: match, header: len(t.header) != headerLen, headerFrom: headerLen, cols: cols, typed: typedCells}
	if err := c.save(ctx, loc, t, &ch); err != nil {
		return nil, err
	}
	return t.result(match), nil
}

func errNoColumn(loc location, name string, names []string) error {
	return connectors.Errorf(connectors.Logic, "%s has no column %q (columns: %s)", loc.label, name, strings.Join(names, ", "))
}
