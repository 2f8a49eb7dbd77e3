package engine

import (
	"time"

	"keep/engine/api"
)

// Subscribe implements API.
func (e *Engine) Subscribe() (<-chan api.Notification, func()) { return e.subs.subscribe() }

func (e *Engine) notify(kind, workflow, text string) {
	if e.events != nil {
		e.events.Wake() // a journaled event may have been committed with this change
	}
	e.subs.send(api.Notification{Kind: kind, Workflow: workflow, Text: text, At: time.Now().UTC()})
}
