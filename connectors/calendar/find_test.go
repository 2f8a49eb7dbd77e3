package calendar_test

import (
	"context"
	"net/http"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// TestAnObjectUnderTheUIDsNameHoldingAnotherEventIsNotIt: keep looks for
// an event first at the name it would have given it (UID.ics), but another
// client may keep another event there. That object is not the event: an
// update of the UID must not crash the host or touch the other event, a
// delete's check must not take it for the event still standing, and a
// read finds nothing.
func TestAnObjectUnderTheUIDsNameHoldingAnotherEventIsNotIt(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	other := radicaletest.Event("other-uid", "Someone else's", ":20261125T090000Z", ":20261125T100000Z")
	r.do(t, "PUT", r.Calendar+"solo.ics", other, http.StatusCreated)

	t.Run("update of the UID is a logic failure, with the other event untouched", func(t *testing.T) {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("update panicked: %v", p)
				}
			}()
			_, err = c.Do(context.Background(), connectors.Call{Method: "update", IdempotencyKey: "k1",
				Params: map[string]any{"uid": "solo", "summary": "Renamed"}})
		}()
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v, want a logic failure: no event solo", err)
		}
		ev := do(t, c, "event", "", map[string]any{"uid": "other-uid"}).(map[string]any)
		if ev["summary"] != "Someone else's" {
			t.Fatalf("the other event became %v", ev)
		}
	})

	t.Run("reading the UID finds nothing", func(t *testing.T) {
		if got := do(t, c, "event", "", map[string]any{"uid": "solo"}); got != nil {
			t.Fatalf("event solo = %v, want null", got)
		}
	})

	t.Run("a delete of the UID reconciles as applied: the event is not there", func(t *testing.T) {
		if v, _ := reconcile(t, c, "delete", "k2", map[string]any{"uid": "solo"}); v != connectors.Applied {
			t.Fatalf("verdict %s, want applied", v)
		}
	})

	t.Run("a delete of the UID is a logic failure and deletes nothing", func(t *testing.T) {
		_, err := c.Do(context.Background(), connectors.Call{Method: "delete", IdempotencyKey: "k3",
			Params: map[string]any{"uid": "solo"}})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v, want a logic failure: no event solo", err)
		}
		if got := do(t, c, "event", "", map[string]any{"uid": "other-uid"}); got == nil {
			t.Fatal("deleting solo deleted the other event kept under solo.ics")
		}
	})
}
