package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// wholeFileWorkflow is watchWorkflow whose producer reads each file it
// lists into the event, as a workflow that sends the file on would, and
// then lists its folder again for other files, finding none.
var wholeFileWorkflow = strings.NewReplacer("SCHEDULE", `{ watch: "inbox" }`,
	`payload: {} });
        }`, `payload: { content: (await ctx.files.read({ path: f.path })).content } });
        }
        await ctx.files.list({ dir: "inbox", glob: "*.md" });`).Replace(watchWorkflow)

// TestAFileBeingWrittenIsTakenWhole: a file copied into a watched folder
// in place (cp writes it in many writes) wakes the producer at its first
// write, and at each. While its writer holds it open, between its two
// halves and after the second, no input is registered with part of it;
// once the writer closes it, which no event tells of, the producer looks
// again on its own and registers it whole, long before its rescan (five
// minutes on, and the test's clock stands still), its second listing,
// which found nothing open, notwithstanding. Before, the first run took
// the first half as the file.
func TestAFileBeingWrittenIsTakenWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inbox := filepath.Join(b.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wholeFileWorkflow, "*.md") {
		t.Fatal("the workflow does not list its folder a second time")
	}
	b.deploy("watch", wholeFileWorkflow)
	_, committed := startWatching(t, b)
	committed("at deploy")

	w, err := os.OpenFile(filepath.Join(inbox, "big.txt"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	noHalf := func(when string) {
		t.Helper()
		if evs := b.events("watch", "file"); len(evs) > 0 {
			t.Fatalf("%s, the producer took %s with %s", when, evs[0].MessageID, evs[0].Payload)
		}
		if ins := b.inputs("watch"); len(ins) > 0 {
			t.Fatalf("%s, an input was registered: %+v", when, ins[0])
		}
	}
	// each half wakes the producer, whose listing finds the file open; the
	// pause after each is long enough for that listing, and for a look
	// again or two that still finds it open
	for i, half := range []string{"first half, ", "second half"} {
		if _, err := w.WriteString(half); err != nil {
			t.Fatal(err)
		}
		committed("after a half was written")
		time.Sleep(time.Second)
		noHalf([]string{"after the first half", "after the second half, the file still open"}[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(b.events("watch", "file"), func(e api.EventView) bool { return e.MessageID == "big.txt" }) {
		if time.Now().After(deadline) {
			t.Fatal("10 s after its writer closed it, the file is not taken")
		}
		time.Sleep(10 * time.Millisecond)
	}
	evs := b.events("watch", "file")
	var got struct{ Content string }
	if err := json.Unmarshal(evs[0].Payload, &got); err != nil || len(evs) != 1 || got.Content != "first half, second half" {
		t.Fatalf("the file was taken as %d events, the first with %s (%v); want one, whole", len(evs), evs[0].Payload, err)
	}
}
