package engine

import (
	"time"

	"keep/engine/api"
)

// Subscribe implements API.
func (e *Engine) Subscribe() (<-chan api.Notification, func()) { return e.subs.subscribe(false) }

// SubscribeScreen implements API.
func (e *Engine) SubscribeScreen() (<-chan api.Notification, func()) { return e.subs.subscribe(true) }

// notify tells the front ends; it does not wake the event bus, which a
// journaled event wakes itself once its transaction commits (a pass of the
// bus is two write transactions: a wake per notification cost a tenth of a
// run's CPU).
func (e *Engine) notify(kind, workflow, text string) {
	e.subs.send(api.Notification{Kind: kind, Workflow: workflow, Text: text, At: time.Now().UTC()})
}
