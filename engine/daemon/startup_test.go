package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"keep/engine"
)

func TestClaimEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a second long-lived engine is refused, naming the first", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "data", "keep.db")
		if _, held, err := EngineHolder(db); held || err != nil {
			t.Fatalf("before any claim: held %v, %v", held, err)
		}
		c, err := ClaimEngine(ctx, db, ClaimOpts{Serving: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Ready()
		pid, held, err := EngineHolder(db)
		if !held || err != nil || pid != os.Getpid() {
			t.Fatalf("EngineHolder under a claim: pid %d held %v, %v", pid, held, err)
		}
		_, err = ClaimEngine(ctx, db, ClaimOpts{})
		var le *engine.LockedError
		if !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Fatalf("second claim: %v", err)
		}
		c.Release()
		if _, held, _ := EngineHolder(db); held {
			t.Fatal("released, still held")
		}
		c2, err := ClaimEngine(ctx, db, ClaimOpts{})
		if err != nil {
			t.Fatalf("claim after release: %v", err)
		}
		c2.Release()
	})

	t.Run("a command waits for a starting daemon until it is ready", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "keep.db")
		if err := AwaitStart(ctx, db, func(int) { t.Error("waited with no daemon ever started") }); err != nil {
			t.Fatal(err)
		}
		c, err := ClaimEngine(ctx, db, ClaimOpts{Serving: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		told := make(chan int, 1)
		done := make(chan error, 1)
		go func() { done <- AwaitStart(ctx, db, func(pid int) { told <- pid }) }()
		if pid := <-told; pid != os.Getpid() {
			t.Errorf("waiting for pid %d, want %d", pid, os.Getpid())
		}
		select {
		case err := <-done:
			t.Fatalf("AwaitStart returned before Ready: %v", err)
		default:
		}
		c.Ready()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("waiting for the database ends with the context", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		db := filepath.Join(dir, "keep.db")
		holder, err := engine.OpenDB(ctx, engine.DBOpts{Path: db})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		c, err := ClaimEngine(ctx, db, ClaimOpts{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		cctx, cancel := context.WithCancel(ctx)
		c.waiting = func(int, string) { cancel() }
		if err := c.WaitDB(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitDB while the database is held, cancelled: %v", err)
		}
	})
}
