package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"keep/engine/api"
	"keep/engine/bus"
	"keep/engine/ledger"
	"keep/storage"
)

// topicReminder is the deferred bus event that announces an unanswered
// prompt again (DESIGN.md §8 "approval reminder": after the policy's delay,
// then daily). Deferred events survive restarts; an answer cancels it.
const topicReminder = "prompt.reminder"

const reminderRepeat = 24 * time.Hour

func (e *Engine) scheduleReminder(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, delay time.Duration) error {
	if e.events == nil || delay <= 0 {
		return nil
	}
	id, err := e.events.ScheduleAtTx(tx, delay, topicReminder, "engine", map[string]any{"mutation": m.ID, "workflow": w.Name}, fmt.Sprint(w.ID))
	if err != nil {
		return err
	}
	m.ReminderID = id
	return e.touchMutation(ctx, tx, m)
}

// onReminder announces a prompt again if it is still unanswered, and
// schedules the next reminder a day later.
func (e *Engine) onReminder(ctx context.Context, ev bus.Event) error {
	var p struct {
		Mutation int64 `json:"mutation"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return fmt.Errorf("reminder payload: %w", err)
	}
	var w *storage.Workflow
	var m *storage.Mutation
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		if m, err = tx.MutationByID(ctx, p.Mutation); err != nil {
			return err
		}
		// Only the reminder the prompt waits on goes on. One that fired
		// before the prompt was answered and came after it was asked again
		// is the earlier question's: going on would fork a second daily
		// chain beside the new question's own.
		if m.ReminderID != 0 {
			d, err := tx.DeferredEvent(ctx, m.ReminderID)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if err == nil && d.EventID != ev.ID {
				return nil
			}
		}
		topic := ""
		switch m.Status {
		case MutationAwaitingApproval:
			topic = "approval.requested"
		case MutationIndeterminate:
			topic = "mutation.indeterminate"
		default:
			return nil // answered meanwhile
		}
		if w, err = tx.WorkflowByID(ctx, m.WorkflowID); err != nil {
			return err
		}
		if err := e.journal(tx, w, topic, map[string]any{"mutation": m.ID, "reminder": true,
			"text": "still waiting for you: " + ledger.Title(m)}); err != nil {
			return err
		}
		return e.scheduleReminder(ctx, tx, w, m, reminderRepeat)
	})
	if err == nil && w != nil {
		e.notify(api.NoteApproval, w.Name, "still waiting for you: "+ledger.Title(m))
	}
	return err
}
