package sandbox

import (
	"strings"
	"testing"
	"time"
)

// TestWatchSchedule: a watched folder alone or beside an interval or cron
// is read into the schedule; alone, the producer still runs every
// WatchRescan; the folder is checked through LoadOptions.WatchFolder, its
// error a diagnostic at the folder's literal.
func TestWatchSchedule(t *testing.T) {
	t.Parallel()
	after := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	src := `export default Keep.workflow({
  name: "w", topics: { t: {} },
  producers: {
    p: { publishes: ["t"],
      schedule: SCHEDULE,
      handler: async (ctx) => {} },
  },
});`
	cases := []struct {
		schedule string
		want     Schedule
		next     time.Time
	}{
		{`{ watch: "inbox" }`, Schedule{Watch: "inbox", Text: "watch inbox"}, after.Add(WatchRescan)},
		{`{ watch: "inbox", interval: "1h" }`, Schedule{Watch: "inbox", Interval: time.Hour, Text: "1h, watch inbox"}, after.Add(time.Hour)},
		{`{ cron: "0 11 * * *", watch: "in/box" }`, Schedule{Watch: "in/box", Cron: "0 11 * * *", Text: "0 11 * * *, watch in/box"}, after.Add(time.Hour)},
	}
	for _, c := range cases {
		var checked []string
		opts := LoadOptions{WatchFolder: func(dir string) error { checked = append(checked, dir); return nil }}
		s, err := Load("w.js", []byte(strings.Replace(src, "SCHEDULE", c.schedule, 1)), opts)
		if err != nil {
			t.Fatalf("%s: %v", c.schedule, err)
		}
		got := s.Workflow.Producers[0].Schedule
		if got != c.want {
			t.Errorf("%s: schedule %+v, want %+v", c.schedule, got, c.want)
		}
		if n := got.Next(after); !n.Equal(c.next) {
			t.Errorf("%s: next %s, want %s", c.schedule, n, c.next)
		}
		if len(checked) != 1 || checked[0] != c.want.Watch {
			t.Errorf("%s: WatchFolder saw %q, want [%q]", c.schedule, checked, c.want.Watch)
		}
	}
	opts := LoadOptions{WatchFolder: func(dir string) error { return errString("no such folder " + dir) }}
	_, err := Load("w.js", []byte(strings.Replace(src, "SCHEDULE", `{ watch: "gone" }`, 1)), opts)
	ve, ok := err.(*ValidationError)
	if !ok || len(ve.Diagnostics) != 1 {
		t.Fatalf("a folder WatchFolder refuses: %v, want one diagnostic", err)
	}
	if d := ve.Diagnostics[0]; d.Line != 5 || d.Col != 26 || !strings.Contains(d.Message, "no such folder gone") {
		t.Errorf("diagnostic %+v, want 5:26 naming the folder", d)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
