package bus

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Subscription is one manifest-driven subscription, the config file's
// [[events.subscribes]] (DESIGN.md §12): events of Topic go to the handler
// registered under the name Handler.
type Subscription struct {
	Topic   string `toml:"topic"`
	Handler string `toml:"handler"`
}

// NotifyUserHandler is the name of the built-in handler NotifyUser is wired
// under in the config file.
const NotifyUserHandler = "notify_user"

// Wire subscribes the named handlers to their topics, in the order of subs.
// Every subscription is checked first, so a config with one bad entry wires
// nothing: an unknown handler name is an error that names it and lists the
// known ones.
func (b *Bus) Wire(subs []Subscription, named map[string]Handler) error {
	known := strings.Join(slices.Sorted(maps.Keys(named)), ", ")
	if known == "" {
		known = "none"
	}
	var errs []error
	for i, s := range subs {
		switch {
		case s.Topic == "":
			errs = append(errs, fmt.Errorf("events.subscribes[%d]: empty topic", i))
		case s.Handler == "":
			errs = append(errs, fmt.Errorf("events.subscribes[%d] (topic %q): empty handler", i, s.Topic))
		case named[s.Handler] == nil:
			errs = append(errs, fmt.Errorf("events.subscribes[%d] (topic %q): unknown handler %q (known: %s)",
				i, s.Topic, s.Handler, known))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bus: wire: %w", errors.Join(errs...))
	}
	for _, s := range subs {
		b.subscribe(s.Topic, s.Handler, named[s.Handler])
	}
	return nil
}
