package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"keep/engine/api"
)

// filesPostWorkflow is issue 26's job, the one measured against Node-RED: a
// files producer, woken by its folder changing, lists it and publishes one
// event per file; an http consumer POSTs each to a sink, with a reconcile
// URL so an unknown outcome can be checked instead of sent again.
const filesPostWorkflow = `
export default Keep.workflow({
  name: "filespost",
  topics: { file: {} },
  producers: {
    inbox: {
      publishes: ["file"],
      schedule: { watch: "inbox", interval: "1h" },
      handler: async (ctx) => {
        for (const f of await ctx.files.list({ dir: "inbox" })) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.name, title: "File " + f.name });
          await ctx.publish("file", { messageId: f.name, inputId, payload: { id: f.name } });
        }
      },
    },
  },
  consumers: {
    post: Keep.consumer({
      subscribe: ["file"],
      concurrency: 8,
      async prepare(ctx) {
        const [e] = await ctx.peek("file", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "file", ids: [e.messageId] }],
          data: { id: e.payload.id },
          ui: { title: "Post " + e.payload.id },
        };
      },
      async mutate(ctx, p) {
        await ctx.http.request({
          method: "POST",
          url: "SINK/items",
          json: { id: p.data.id },
          reconcile: { url: "SINK/items/" + p.data.id },
        });
      },
      async next() {},
    }),
  },
});
`

// FilesPostResults is the files→http row.
type FilesPostResults struct {
	// FilesPostItems files were dropped at once; FilesPostItemsPerS is
	// items over the time from the drop to the last POST.
	FilesPostItems     int     `json:"files_post_items"`
	FilesPostItemsPerS float64 `json:"files_post_items_per_s"`
	FilesPostSeconds   float64 `json:"files_post_seconds"`
	// FilesPostLatencyMS: a file's drop to its POST reaching the sink.
	FilesPostLatencyMS Latency `json:"files_post_latency_ms"`
	// FilesPostCPUSPer1000: keep's user+system CPU seconds from just
	// before the drop to the last POST, per 1,000 items: the keep daemon's
	// (the real binary, its own process) and its script workers', read
	// from /proc by its pid as Node-RED's are (round.go); the drop and the
	// sink are the bench's, in neither.
	FilesPostCPUSPer1000 float64 `json:"files_post_cpu_s_per_1000"`
	// FilesPostSinkDelayMS: how long the sink waits before answering.
	FilesPostSinkDelayMS float64 `json:"files_post_sink_delay_ms"`
	// FilesPostDropMS: how long the drop took (renames into the folder of
	// files written beside it); it is inside the span and the latencies.
	FilesPostDropMS float64 `json:"files_post_drop_ms"`
	// FilesPostPeakRSSMB: keep's peak resident set over the round (from
	// the drop on), the daemon's and its script workers', summed.
	FilesPostPeakRSSMB float64 `json:"files_post_peak_rss_mb"`
	// FilesPostRounds: keep's rounds the figures above are the mean of.
	FilesPostRounds int `json:"files_post_rounds"`
	// NodeRed says whether Node-RED ran beside keep, or why not;
	// NodeRedFlows are its figures by flow, KeepOverNodeRed keep's over
	// the better flow's, figure by figure.
	NodeRed         string                  `json:"node_red"`
	NodeRedFlows    map[string]RoundSummary `json:"node_red_flows,omitempty"`
	KeepOverNodeRed *RoundSummary           `json:"keep_over_node_red,omitempty"`
}

// postSink is the local webhook, keep's and Node-RED's: it records each
// POST (the item, its Idempotency-Key, when it arrived), answers after a
// fixed delay, and answers a reconcile GET 200 for an item it has, 404
// otherwise. done closes when every item has its first POST.
type postSink struct {
	delay time.Duration
	want  int
	done  chan struct{}
	// wantKeys: each POST must carry an Idempotency-Key of its item's own
	// (keep's; Node-RED's flows send none)
	wantKeys bool

	mu      sync.Mutex
	first   map[string]time.Time // item → first POST's arrival
	posts   map[string]int       // item → POSTs
	keys    map[string]string    // item → its first key
	keyItem map[string]string    // key → its item
	errs    []string
}

func newPostSink(want int, delay time.Duration, keys bool) *postSink {
	return &postSink{delay: delay, want: want, done: make(chan struct{}), wantKeys: keys,
		first: map[string]time.Time{}, posts: map[string]int{}, keys: map[string]string{}, keyItem: map[string]string{}}
}

func (s *postSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if r.Method == http.MethodGet {
		id := strings.TrimPrefix(r.URL.Path, "/items/")
		s.mu.Lock()
		_, ok := s.first[id]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{}`))
		return
	}
	var body struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/items" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	switch {
	case !s.wantKeys:
	case key == "":
		s.errs = append(s.errs, body.ID+" came without an Idempotency-Key")
	case s.keys[body.ID] != "" && s.keys[body.ID] != key:
		s.errs = append(s.errs, body.ID+" came under two keys")
	case s.keyItem[key] != "" && s.keyItem[key] != body.ID:
		s.errs = append(s.errs, "key "+key+" came for two items")
	}
	if s.keys[body.ID] == "" {
		s.keys[body.ID] = key
	}
	s.keyItem[key] = body.ID
	s.posts[body.ID]++
	if _, ok := s.first[body.ID]; !ok {
		s.first[body.ID] = at
		if len(s.first) == s.want {
			close(s.done)
		}
	}
	s.mu.Unlock()
	time.Sleep(s.delay)
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(`{"ok":true}`))
}

// check: every file posted once, under one key of its own where keys are
// asked for.
func (s *postSink) check(names []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		return fmt.Errorf("sink: %s", strings.Join(s.errs[:min(len(s.errs), 5)], "; "))
	}
	for _, n := range names {
		if c := s.posts[n]; c != 1 {
			return fmt.Errorf("sink: %s was posted %d times, want 1", n, c)
		}
	}
	if len(s.posts) != len(names) {
		return fmt.Errorf("sink: %d items posted, want %d", len(s.posts), len(names))
	}
	return nil
}

// FilesPostRound is one files→http round's figures, keep's or Node-RED's.
type FilesPostRound struct {
	Items      int
	Span       time.Duration // the drop's start to the last POST
	Lat        []float64     // drop-to-POST, ms, sorted
	CPU        float64       // CPU-s over the round, the process's with its children's
	PeakRSSMB  float64       // peak resident set over the round, with its children's
	Drop       time.Duration
	ItemsPerS  float64
	CPUPer1000 float64
}

// filesPost takes the files→http row: a round of filesPostOnce at the
// row's options and, when Node-RED is found, a round of each of its flows
// after it, NodeRedPairs times over (the machine's load moves between
// rounds; alternating spreads it over both sides).
func filesPost(ctx context.Context, o Options, r *Results) error {
	bin, why := nodeRedBin(o)
	pairs := 1
	if bin != "" {
		pairs = o.NodeRedPairs
	}
	r.NodeRed = why
	var keep []*FilesPostRound
	nr := map[string][]*FilesPostRound{}
	for i := range pairs {
		f, err := filesPostOnce(ctx, o, filepath.Join(o.Dir, fmt.Sprintf("keep-%d", i)), o.FilesPostItems, o.FilesPostSinkDelay, filesPostConcurrency)
		if err != nil {
			return err
		}
		keep = append(keep, f)
		o.Logf("files→http: %d files posted in %s (%.0f items/s), drop-to-POST p50 %.0f ms p99 %.0f ms, %.2f CPU-s per 1000, peak RSS %.1f MB (dropped in %.0f ms)",
			f.Items, f.Span.Round(time.Millisecond), f.ItemsPerS, percentile(f.Lat, 50), percentile(f.Lat, 99), f.CPUPer1000, f.PeakRSSMB,
			float64(f.Drop.Microseconds())/1000)
		if bin == "" {
			continue
		}
		for _, flow := range NodeRedFlows {
			g, err := NodeRedRound(ctx, filepath.Join(o.Dir, fmt.Sprintf("nodered-%s-%d", flow, i)), bin, flow, o.FilesPostItems, o.FilesPostSinkDelay)
			if err != nil {
				return err
			}
			nr[flow] = append(nr[flow], g)
			o.Logf("node-red %s: %d files posted in %s (%.0f items/s), drop-to-POST p50 %.0f ms p99 %.0f ms, %.2f CPU-s per 1000, peak RSS %.1f MB",
				flow, g.Items, g.Span.Round(time.Millisecond), g.ItemsPerS, percentile(g.Lat, 50), percentile(g.Lat, 99), g.CPUPer1000, g.PeakRSSMB)
		}
	}
	k := summarize(keep)
	r.FilesPostItems = o.FilesPostItems
	r.FilesPostSeconds = k.Seconds
	r.FilesPostItemsPerS = k.ItemsPerS
	r.FilesPostLatencyMS = Latency{P50: k.P50MS, P99: k.P99MS}
	r.FilesPostCPUSPer1000 = k.CPUSPer1000
	r.FilesPostPeakRSSMB = k.PeakRSSMB
	r.FilesPostSinkDelayMS = float64(o.FilesPostSinkDelay.Microseconds()) / 1000
	r.FilesPostDropMS = k.DropMS
	r.FilesPostRounds = len(keep)
	if bin != "" {
		r.NodeRed = fmt.Sprintf("measured: %s, %d rounds of keep and of each flow, alternating", bin, pairs)
		r.NodeRedFlows = map[string]RoundSummary{}
		var best RoundSummary
		for i, flow := range NodeRedFlows {
			s := summarize(nr[flow])
			r.NodeRedFlows[flow] = s
			if i == 0 {
				best = s
				continue
			}
			best.ItemsPerS = max(best.ItemsPerS, s.ItemsPerS)
			best.CPUSPer1000 = min(best.CPUSPer1000, s.CPUSPer1000)
			best.P50MS = min(best.P50MS, s.P50MS)
			best.PeakRSSMB = min(best.PeakRSSMB, s.PeakRSSMB)
		}
		r.KeepOverNodeRed = &RoundSummary{ItemsPerS: k.ItemsPerS / best.ItemsPerS, CPUSPer1000: k.CPUSPer1000 / best.CPUSPer1000,
			P50MS: k.P50MS / best.P50MS, PeakRSSMB: k.PeakRSSMB / best.PeakRSSMB}
		q := r.KeepOverNodeRed
		o.Logf("files→http, keep over the better Node-RED flow: items/s %.2f (target >= 1.2), CPU-s per 1,000 %.2f (<= 0.8), p50 %.2f (<= 1.0), peak RSS %.2f (<= 1.0)",
			q.ItemsPerS, q.CPUSPer1000, q.P50MS, q.PeakRSSMB)
	}
	return nil
}

// RoundSummary is the mean of rounds' figures (the highest peak RSS); as
// KeepOverNodeRed, keep's over the better of Node-RED's flows, each figure
// on its own.
type RoundSummary struct {
	ItemsPerS   float64 `json:"items_per_s"`
	CPUSPer1000 float64 `json:"cpu_s_per_1000"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms,omitempty"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	Seconds     float64 `json:"seconds,omitempty"`
	DropMS      float64 `json:"drop_ms,omitempty"`
}

func summarize(rounds []*FilesPostRound) RoundSummary {
	var s RoundSummary
	for _, f := range rounds {
		s.ItemsPerS += f.ItemsPerS
		s.CPUSPer1000 += f.CPUPer1000
		s.P50MS += percentile(f.Lat, 50)
		s.P99MS += percentile(f.Lat, 99)
		s.Seconds += f.Span.Seconds()
		s.DropMS += float64(f.Drop.Microseconds()) / 1000
		s.PeakRSSMB = max(s.PeakRSSMB, f.PeakRSSMB)
	}
	if n := float64(len(rounds)); n > 0 {
		s.ItemsPerS, s.CPUSPer1000, s.P50MS, s.P99MS, s.Seconds, s.DropMS = s.ItemsPerS/n, s.CPUSPer1000/n, s.P50MS/n, s.P99MS/n, s.Seconds/n, s.DropMS/n
	}
	return s
}

// filesPostConcurrency is the row's consumer concurrency.
const filesPostConcurrency = 8

// filesPostOnce runs the keep binary as a daemon in dir (its own database,
// a config rooted in dir/root), deploys the files→http workflow (its
// consumer at concurrency) through the daemon's socket, waits for its
// producer's first run (on the empty folder, due at deploy) and settle,
// then drops n JSON files into its folder at once, which wakes the
// producer through its folder watch, and waits for the sink, answering
// after delay, to have every item once. The window (round.go) is Node-RED's:
// the daemon's CPU and peak RSS with its workers', latency at the sink.
func filesPostOnce(ctx context.Context, o Options, dir string, n int, delay time.Duration, concurrency int) (*FilesPostRound, error) {
	root := filepath.Join(dir, "root")
	inbox, staging := filepath.Join(root, "inbox"), filepath.Join(dir, "staging")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		return nil, err
	}
	sink := newPostSink(n, delay, true)
	srv := httptest.NewServer(sink)
	defer srv.Close()
	cfg, err := daemonConfig(dir, root)
	if err != nil {
		return nil, err
	}
	d, err := startDaemon(ctx, o.DaemonBinary, dir, filepath.Join(dir, "keep.db"), cfg)
	if err != nil {
		return nil, err
	}
	defer d.kill()
	notes, cancel := d.client.Subscribe()
	src := strings.NewReplacer("SINK", srv.URL, "concurrency: 8", fmt.Sprintf("concurrency: %d", concurrency)).Replace(filesPostWorkflow)
	if o.editWorkflow != nil {
		src = o.editWorkflow(src)
	}
	if _, err := d.client.Deploy(ctx, "filespost.js", []byte(src), ""); err != nil {
		cancel()
		return nil, fmt.Errorf("deploy through the daemon: %w", err)
	}
	err = awaitNote(ctx, notes, "inbox")
	cancel() // no notification stream while measured: Node-RED has none
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, d.why())
	}
	time.Sleep(settle)

	drop, err := Stage(staging, n)
	if err != nil {
		return nil, err
	}
	w := window{pid: d.pid, done: sink.done, within: roundWithin(n, delay), failed: d.failed, hook: o.roundHook}
	cpu, peak, err := w.run(ctx, drop, staging, inbox)
	if err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	// every item reached the sink; a run may still have failed after its
	// POST, or fail committing as the daemon stops
	if err := d.failed(ctx); err != nil {
		return nil, err
	}
	// let the last run commit, so a second POST would show
	if err := d.stop(); err != nil {
		return nil, err
	}
	if err := sink.check(drop.Names); err != nil {
		return nil, err
	}
	return roundFigures(n, drop, sink.snapshot(), cpu, peak), nil
}

func (s *postSink) snapshot() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.first)
}

// awaitNote waits for a run.committed whose text starts with prefix.
func awaitNote(ctx context.Context, notes <-chan api.Notification, prefix string) error {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case n, ok := <-notes:
			if !ok {
				return fmt.Errorf("the notification stream ended before a %q commit", prefix)
			}
			if n.Kind == api.NoteRunFailed {
				return fmt.Errorf("run failed: %s", n.Text)
			}
			if n.Kind == api.NoteRunCommitted && strings.HasPrefix(n.Text, prefix) {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("no %q commit within 30s", prefix)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// filesPostRows adds the files→http row to the table, with issue 26's
// targets (Node-RED on the same job did 446–721 items/s, p50 1.2 s,
// 1.3–1.8 CPU-s per 1,000).
func (r *Results) filesPostRows(row func(name, value, target string, met *bool)) {
	b := func(v bool) *bool { return &v }
	row("files_post_items_per_s", f1(r.FilesPostItemsPerS), "(judged beside Node-RED: keep_over_node_red)", nil)
	row("files_post_latency_ms.p50", f1(r.FilesPostLatencyMS.P50), "< 1000 (drop to POST)", b(r.FilesPostLatencyMS.P50 < 1000))
	row("files_post_latency_ms.p99", f1(r.FilesPostLatencyMS.P99), fmt.Sprintf("(%d files dropped at once)", r.FilesPostItems), nil)
	row("files_post_cpu_s_per_1000", f2(r.FilesPostCPUSPer1000), "(judged beside Node-RED: keep_over_node_red)", nil)
	row("files_post_sink_delay_ms", f1(r.FilesPostSinkDelayMS), "(the sink answers each POST after this)", nil)
	row("files_post_drop_ms", f1(r.FilesPostDropMS), "(the drop: files written beside the folder, renamed into it)", nil)
	row("files_post_peak_rss_mb", f1(r.FilesPostPeakRSSMB), "(keep's daemon and its workers, over the round)", nil)
	row("node_red", "-", r.NodeRed, nil)
	for _, flow := range NodeRedFlows {
		if s, ok := r.NodeRedFlows[flow]; ok {
			row("node_red."+flow+"_items_per_s", f1(s.ItemsPerS), fmt.Sprintf("(p50 %.0f ms, %.2f CPU-s per 1,000, peak RSS %.1f MB)", s.P50MS, s.CPUSPer1000, s.PeakRSSMB), nil)
		}
	}
	if q := r.KeepOverNodeRed; q != nil {
		row("keep_over_node_red.items_per_s", f2(q.ItemsPerS), ">= 1.2 (against the better of its flows)", b(q.ItemsPerS >= 1.2))
		row("keep_over_node_red.cpu_s_per_1000", f2(q.CPUSPer1000), "<= 0.8", b(q.CPUSPer1000 <= 0.8))
		row("keep_over_node_red.p50", f2(q.P50MS), "<= 1.0", b(q.P50MS <= 1.0))
		row("keep_over_node_red.peak_rss", f2(q.PeakRSSMB), "<= 1.0", b(q.PeakRSSMB <= 1.0))
	}
}

// FilesPost takes the files→http row alone (a caller that wants only it): the job
// of issue 26 is quicker to measure again than the whole bench.
func FilesPost(ctx context.Context, o Options) (*Results, error) {
	o.defaults()
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "keep-bench-")
		if err != nil {
			return nil, err
		}
		o.Dir = dir
		defer os.RemoveAll(dir)
	}
	r := &Results{Options: o, Machine: machine(), Started: time.Now().UTC().Format(time.RFC3339)}
	if err := filesPost(ctx, o, r); err != nil {
		return nil, fmt.Errorf("bench files to http: %w", err)
	}
	return r, nil
}
