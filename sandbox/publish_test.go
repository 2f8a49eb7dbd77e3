package sandbox

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestPublishRulesSayOneThing: a publish the facade refuses is refused by
// CheckPublish (what a Host across the pipe checks) in the same words, for
// every rule: the rules live in one place, publish.go.
func TestPublishRulesSayOneThing(t *testing.T) {
	t.Parallel()
	producer := PublishRules{Publishes: []string{"a"}, Producer: true, Who: `producer "p"`}
	next := PublishRules{Publishes: []string{"b"}, Who: `consumer "c"`}
	cases := []struct {
		name   string
		phase  Phase
		code   string
		rules  PublishRules
		topics []string
		ev     PublishRequest
	}{
		{"an undeclared topic", PhaseProducer, `ctx.publish(["b"][0], { messageId: "m", inputId: "i" })`, producer, []string{"b"}, PublishRequest{MessageID: "m", InputID: "i"}},
		{"no topic", PhaseNext, `ctx.publish([], { messageId: "m" })`, next, nil, PublishRequest{MessageID: "m"}},
		{"no messageId", PhaseNext, `ctx.publish("b", { payload: 1 })`, next, []string{"b"}, PublishRequest{}},
		{"a producer without an inputId", PhaseProducer, `ctx.publish("a", { messageId: "m" })`, producer, []string{"a"}, PublishRequest{MessageID: "m"}},
		{"next with an inputId", PhaseNext, `ctx.publish("b", { messageId: "m", inputId: "i" })`, next, []string{"b"}, PublishRequest{MessageID: "m", InputID: "i"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := "try { await " + c.code + "; } catch (e) {}\nreturn { reservations: [], data: null };"
			var h handlers
			if c.phase == PhaseProducer {
				h.producer = code
			} else {
				h.next = code
			}
			_, err := invoke(t, load(t, h), c.phase, &recordingHost{}, testLimits(), json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrLogic {
				t.Fatalf("the facade: %v, want a logic error", err)
			}
			host := CheckPublish(c.rules, c.topics, c.ev)
			if host == nil || host.Error() != e.Message {
				t.Errorf("the facade says %q, CheckPublish says %v", e.Message, host)
			}
		})
	}
	t.Run("a publish within the rules passes", func(t *testing.T) {
		t.Parallel()
		if err := CheckPublish(producer, []string{"a"}, PublishRequest{MessageID: "m", InputID: "7"}); err != nil {
			t.Error(err)
		}
		if err := CheckPublish(next, []string{"b"}, PublishRequest{MessageID: "m"}); err != nil {
			t.Error(err)
		}
	})
}
