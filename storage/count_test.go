package storage

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestCountStatementsOneDB: a count is of its own database's statements,
// not of another's run beside it (tests that count run in parallel).
func TestCountStatementsOneDB(t *testing.T) {
	ctx := context.Background()
	counted, other := openTemp(t), openTemp(t)
	var n atomic.Int64
	stop := counted.CountStatements(func(string) { n.Add(1) })
	defer stop()
	if _, err := other.Read().Workflows(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Write(ctx, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 0 {
		t.Errorf("%d statements of another database counted", got)
	}
	if _, err := counted.Read().Workflows(ctx); err != nil {
		t.Fatal(err)
	}
	if err := counted.Write(ctx, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got < 3 { // the read, BEGIN, COMMIT
		t.Errorf("%d statements counted of the database's read and write, want at least 3", got)
	}
}
