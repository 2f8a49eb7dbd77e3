// Package system is the connector for the host's own clock and randomness:
// two reads, no mutations. Both are injected so that tests and replays see
// the values they chose.
package system

import (
	"context"
	"math/rand/v2"
	"time"

	"keep/connectors"
)

// Config configures the system connector. Zero values take the defaults.
type Config struct {
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Rand returns a number in [0, 1). Default: math/rand/v2.Float64.
	Rand func() float64
}

// Connector answers "now" and "random".
type Connector struct {
	now  func() time.Time
	rand func() float64
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a system connector.
func New(cfg Config) (*Connector, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return &Connector{now: cfg.Now, rand: cfg.Rand}, nil
}

// Name is "system".
func (c *Connector) Name() string { return "system" }

// Methods lists now and random, both reads.
func (c *Connector) Methods() []connectors.Method {
	return []connectors.Method{
		{Name: "now", Kind: connectors.Read,
			Doc:     "The host's clock: iso in the host's own time zone (to tell the local day and hour), unix in seconds.",
			Result:  "{ iso: string, unix: number }",
			Example: `const { iso } = await ctx.system.now()`},
		{Name: "random", Kind: connectors.Read,
			Doc:     "A random number in [0, 1) from the host's source (tests inject one).",
			Result:  "{ value: number }",
			Example: `const { value } = await ctx.system.random()`},
	}
}

// InputTypes: producers driven by the clock or by chance register inputs
// under the system source.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"system": {"schedule", "random"}}
}

// Do answers now → {iso, unix} and random → {value}.
func (c *Connector) Do(_ context.Context, call connectors.Call) (any, error) {
	switch call.Method {
	case "now":
		t := c.now()
		// iso keeps the clock's own zone so a script can tell the local day;
		// unix is zone-free.
		return map[string]any{"iso": t.Format(time.RFC3339), "unix": t.Unix()}, nil
	case "random":
		return map[string]any{"value": c.rand()}, nil
	default:
		return nil, connectors.Errorf(connectors.Logic, "system has no method %q (it has: now, random)", call.Method)
	}
}
