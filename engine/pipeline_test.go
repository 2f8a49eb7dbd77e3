package engine

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/engine/enginetest/kit"
)

// notesWorkflow is kit's NotesWorkflow, shared with the daemon's tests.
const notesWorkflow = kit.NotesWorkflow

func TestPipeline(t *testing.T) {
	t.Parallel()

	t.Run("notes flow through two consumers and each input shows both outputs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.write("inbox/b.txt", "beta")
		b.deploy("notes", notesWorkflow)
		b.drain()

		if got := b.read("log.csv"); got != "a.txt,alpha\nb.txt,beta\n" {
			t.Fatalf("log.csv = %q", got)
		}
		if b.read("receipts/a.txt") != "logged" || b.read("receipts/b.txt") != "logged" {
			t.Fatal("receipts missing")
		}
		ins := b.inputs("notes")
		if len(ins) != 2 {
			t.Fatalf("inputs = %d, want 2", len(ins))
		}
		for _, in := range ins {
			if in.Status != api.InputDone {
				t.Errorf("input %s status %s, want done", in.Title, in.Status)
			}
			if len(in.Outputs) != 2 {
				t.Fatalf("input %s has %d outputs, want 2 (log line and receipt)", in.Title, len(in.Outputs))
			}
			if !strings.HasPrefix(in.Outputs[0].Title, "Log ") || !strings.HasPrefix(in.Outputs[1].Title, "Receipt for ") {
				t.Errorf("outputs of %s = %+v", in.Title, in.Outputs)
			}
		}
		// causal chain: note.logged events inherit the input of note.found
		for _, ev := range b.events("notes", "note.logged") {
			if len(ev.CausedBy) != 1 {
				t.Errorf("note.logged %s caused_by %v, want one input", ev.MessageID, ev.CausedBy)
			}
		}
		for _, m := range b.mutations("notes") {
			if m.Status != "applied" || m.ResolvedBy != "host" {
				t.Errorf("mutation %s: %s by %q", m.ID, m.Status, m.ResolvedBy)
			}
		}
	})

	t.Run("draining again finds nothing due and changes nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", notesWorkflow)
		b.drain()
		n := len(b.runs("notes"))
		b.drain()
		if got := len(b.runs("notes")); got != n {
			t.Fatalf("second drain made %d more runs", got-n)
		}
		next, err := b.e.NextDue(context.Background())
		if err != nil || next == nil {
			t.Fatalf("next due = %v, %v; want the producer's next run", next, err)
		}
	})
}
