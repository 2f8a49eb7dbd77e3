package bus_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/bus"
	"keep/storage"
)

// childEnv makes the test binary, re-run by a test, act as an engine that
// is killed mid-delivery instead of running the tests.
const childEnv = "KEEP_BUS_CHILD"

const crashTopic = "crash.test"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		crashChild(path)
	}
	os.Exit(m.Run())
}

// crashChild opens the database, recovers and starts a bus whose handler
// announces the delivery on stdout and then never returns: the parent
// kills the process there, with the event processing on disk.
func crashChild(path string) {
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: path, Logger: discard()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b := bus.New(db, bus.Opts{Logger: discard()})
	b.Subscribe(crashTopic, func(_ context.Context, ev bus.Event) error {
		fmt.Printf("delivering %d\n", ev.ID)
		// Sleep rather than block on a channel, so the runtime never takes
		// an idle process for a deadlock and exits on its own.
		time.Sleep(time.Hour)
		return nil
	})
	if _, err := b.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := b.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	time.Sleep(time.Hour)
	os.Exit(2)
}

// The chapter's at-least-once promise, tested the way it is broken: a real
// process is SIGKILLed in the middle of a delivery, and the next engine on
// the same file delivers the event again and ends it done.
func TestDeliveryInterruptedByAKilledProcessIsRepeatedAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")

	db, err := storage.Open(ctx, storage.Opts{Path: path, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	id, err := bus.New(db, bus.Opts{Logger: discard()}).Emit(ctx, crashTopic, map[string]string{"text": "once"}, "wf-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		if want := fmt.Sprintf("delivering %d", id); strings.TrimSpace(line) != want {
			t.Fatalf("child said %q, want %q (stderr: %s)", line, want, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the child never started delivering (stderr: %s)", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true

	// The kernel dropped the child's lock with the process.
	db, err = storage.Open(ctx, storage.Opts{Path: path, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ev, err := db.Read().JournalEvent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Status != storage.JournalProcessing {
		t.Fatalf("after the kill the event is %s, want processing", ev.Status)
	}

	b := bus.New(db, bus.Opts{Logger: discard()})
	got := make(chan bus.Event, 1)
	b.Subscribe(crashTopic, func(_ context.Context, ev bus.Event) error {
		got <- ev
		return nil
	})
	n, err := b.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("recovered %d events, want 1", n)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer b.Stop(ctx)
	again := receive(t, got)
	if again.ID != id || again.CorrelationID != "wf-1" || string(again.Payload) != `{"text":"once"}` {
		t.Fatalf("redelivered %+v", again)
	}
	bd := bundle{ctx: ctx, db: db}
	bd.waitStatus(t, id, storage.JournalDone)
}
