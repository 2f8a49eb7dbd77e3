package system_test

import (
	"context"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/system"
)

func TestSystem(t *testing.T) {
	t.Parallel()

	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	setup := func(t *testing.T) *system.Connector {
		t.Helper()
		c, err := system.New(system.Config{Now: func() time.Time { return at }, Rand: func() float64 { return 0.25 }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("now returns the injected time as iso and unix", func(t *testing.T) {
		t.Parallel()
		got, err := setup(t).Do(context.Background(), connectors.Call{Method: "now"})
		if err != nil {
			t.Fatal(err)
		}
		m := got.(map[string]any)
		if m["iso"] != "2026-03-04T05:06:07+01:00" || m["unix"] != at.Unix() {
			t.Fatalf("got %v", m)
		}
	})

	t.Run("random returns the injected value", func(t *testing.T) {
		t.Parallel()
		got, err := setup(t).Do(context.Background(), connectors.Call{Method: "random"})
		if err != nil {
			t.Fatal(err)
		}
		if got.(map[string]any)["value"] != 0.25 {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("an unknown method is a logic error", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).Do(context.Background(), connectors.Call{Method: "sleep"})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the defaults give a real clock and a value in [0, 1)", func(t *testing.T) {
		t.Parallel()
		c, err := system.New(system.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Do(context.Background(), connectors.Call{Method: "random"})
		if err != nil {
			t.Fatal(err)
		}
		if v := got.(map[string]any)["value"].(float64); v < 0 || v >= 1 {
			t.Fatalf("value %v", v)
		}
		got, err = c.Do(context.Background(), connectors.Call{Method: "now"})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(time.Unix(got.(map[string]any)["unix"].(int64), 0)); d < -time.Second || d > time.Minute {
			t.Fatalf("clock off by %v", d)
		}
	})

	t.Run("it offers schedule and random inputs and only reads", func(t *testing.T) {
		t.Parallel()
		c := setup(t)
		r := connectors.NewRegistry()
		r.Register(c)
		if err := r.CheckInput("system", "schedule"); err != nil {
			t.Fatal(err)
		}
		if err := r.CheckInput("system", "random"); err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Methods() {
			if m.Kind != connectors.Read {
				t.Fatalf("%s is %s", m.Name, m.Kind)
			}
		}
	})
}
