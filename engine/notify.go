package engine

import "time"

// Subscribe implements API.
func (e *Engine) Subscribe() (<-chan Notification, func()) { return e.subs.subscribe() }

func (e *Engine) notify(kind, workflow, text string) {
	if e.events != nil {
		e.events.Wake() // a journaled event may have been committed with this change
	}
	e.subs.send(Notification{Kind: kind, Workflow: workflow, Text: text, At: time.Now().UTC()})
}
