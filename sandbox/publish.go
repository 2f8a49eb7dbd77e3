package sandbox

import (
	"errors"
	"fmt"
	"slices"
)

// The rules of a publish, written once. The facade checks them where the
// script calls ctx.publish (facade.go), so a broken rule names the line; a
// Host takes the publish only after that, in the worker's process, across
// the pipe (proxy.go), and checks the same rules with CheckPublish, in the
// same words, for a caller that is not the facade.

const publishOp = "ctx.publish"

// publishTopicsRule: at least one topic, each among the handler's
// publishes; who names the handler in the message.
func publishTopicsRule(publishes []string, who string, topics []string) string {
	if len(topics) == 0 {
		return publishOp + " takes a topic or an array of topics first"
	}
	for _, t := range topics {
		if !slices.Contains(publishes, t) {
			return fmt.Sprintf("%s: topic %q is not among the publishes of %s (%v)", publishOp, t, who, publishes)
		}
	}
	return ""
}

// publishMessageIDRule: every publish carries the messageId that makes a
// re-run's publish the same event.
func publishMessageIDRule(id string) string {
	if id == "" {
		return publishOp + " needs a messageId (a non-empty string)"
	}
	return ""
}

// publishInputRule: a producer names the input its event comes from; next
// names none (given: the script passed one), as its events are caused by
// the reserved events' inputs.
func publishInputRule(producer, given bool, id string) string {
	switch {
	case producer && id == "":
		return publishOp + " from a producer needs the inputId that ctx.registerInput returned"
	case !producer && given:
		return publishOp + " in next takes no inputId: events published in next are caused by the reserved events' inputs"
	}
	return ""
}

// PublishRules is what a handler may publish.
type PublishRules struct {
	Publishes []string // the handler's declared topics
	Producer  bool     // a producer (each publish names its input), else next
	Who       string   // the handler, as messages name it
}

// CheckPublish is the rules of a publish for a Host: the facade has
// checked them already for every publish a script makes.
func CheckPublish(r PublishRules, topics []string, ev PublishRequest) error {
	for _, msg := range []string{
		publishTopicsRule(r.Publishes, r.Who, topics),
		publishMessageIDRule(ev.MessageID),
		publishInputRule(r.Producer, ev.InputID != "", ev.InputID),
	} {
		if msg != "" {
			return errors.New(msg)
		}
	}
	return nil
}
