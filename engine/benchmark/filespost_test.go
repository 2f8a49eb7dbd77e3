package benchmark

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestFilesPost runs the files→http row at a small scale: every file
// reaches the sink once under a key of its own (the row checks it and
// fails otherwise), and each figure is there. No target is asserted.
func TestFilesPost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: 60, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if r.FilesPostItems != 60 {
		t.Errorf("files_post_items = %d, want 60", r.FilesPostItems)
	}
	for name, v := range map[string]float64{
		"files_post_items_per_s": r.FilesPostItemsPerS, "files_post_latency_ms.p50": r.FilesPostLatencyMS.P50,
		"files_post_latency_ms.p99": r.FilesPostLatencyMS.P99, "files_post_cpu_s_per_1000": r.FilesPostCPUSPer1000,
		"files_post_sink_delay_ms": r.FilesPostSinkDelayMS, "files_post_drop_ms": r.FilesPostDropMS,
	} {
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	if r.FilesPostLatencyMS.P99 < r.FilesPostLatencyMS.P50 {
		t.Errorf("p99 %v < p50 %v", r.FilesPostLatencyMS.P99, r.FilesPostLatencyMS.P50)
	}
	var out bytes.Buffer
	r.Table(&out)
	if !strings.Contains(out.String(), "files_post_items_per_s") || !strings.Contains(out.String(), "files_post_sink_delay_ms") ||
		!strings.Contains(out.String(), "files_post_drop_ms") {
		t.Errorf("the table lacks the files→http row:\n%s", out.String())
	}
}

// TestPostSinkCheck: the row's own check fails on an item posted twice, an
// item posted under two keys, one key for two items, and a missing item.
func TestPostSinkCheck(t *testing.T) {
	post := func(srv *httptest.Server, id, key string) {
		req, _ := http.NewRequest("POST", srv.URL+"/items", strings.NewReader(`{"id":"`+id+`"}`))
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	cases := map[string]struct {
		posts [][2]string
		want  string
	}{
		"fine":     {[][2]string{{"a", "k1"}, {"b", "k2"}}, ""},
		"twice":    {[][2]string{{"a", "k1"}, {"b", "k2"}, {"a", "k1"}}, "posted 2 times"},
		"two keys": {[][2]string{{"a", "k1"}, {"b", "k2"}, {"a", "k3"}}, "under two keys"},
		"shared":   {[][2]string{{"a", "k1"}, {"b", "k1"}}, "for two items"},
		"missing":  {[][2]string{{"a", "k1"}}, "b was posted 0 times"},
		"no key":   {[][2]string{{"a", ""}, {"b", "k2"}}, "without an Idempotency-Key"},
	}
	for name, c := range cases {
		sink := newPostSink(2, 0)
		srv := httptest.NewServer(sink)
		for _, p := range c.posts {
			post(srv, p[0], p[1])
		}
		srv.Close()
		err := sink.check([]string{"a", "b"})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one saying %q", name, err, c.want)
		}
	}
}

// BenchmarkFilesPost is the files→http row under go test, so a profile is
// one flag away: go test ./engine/benchmark -run '^$' -bench FilesPost -cpuprofile cpu.out
func BenchmarkFilesPost(b *testing.B) {
	for b.Loop() {
		r, err := FilesPost(context.Background(), Options{Dir: b.TempDir(), FilesPostItems: 1000, Logf: b.Logf})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.FilesPostItemsPerS, "items/s")
		b.ReportMetric(r.FilesPostLatencyMS.P50, "p50-ms")
		b.ReportMetric(r.FilesPostCPUSPer1000, "cpu-s/1000")
		if q := r.KeepOverNodeRed; q != nil { // KEEP_BENCH_NODE_RED=PATH
			b.ReportMetric(q.ItemsPerS, "items/s-vs-nr")
			b.ReportMetric(q.CPUSPer1000, "cpu-vs-nr")
			b.ReportMetric(q.P50MS, "p50-vs-nr")
			b.ReportMetric(q.PeakRSSMB, "rss-vs-nr")
		}
	}
}

// TestSlowSink runs the slow-sink row at a small scale: both concurrencies
// post every file once (each round checks it) and the ratio is there. No
// target is asserted.
func TestSlowSink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := SlowSink(ctx, Options{Dir: t.TempDir(), SlowSinkItems: 30, SlowSinkPairs: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.SlowSinkC1ItemsPerS) != 1 || len(r.SlowSinkC8ItemsPerS) != 1 || !(r.SlowSinkRatio > 0) {
		t.Fatalf("slow sink: c1 %v, c8 %v, ratio %v; want one round each and a ratio", r.SlowSinkC1ItemsPerS, r.SlowSinkC8ItemsPerS, r.SlowSinkRatio)
	}
	var out bytes.Buffer
	r.Table(&out)
	if !strings.Contains(out.String(), "slow_sink_c8_over_c1") {
		t.Errorf("the table lacks the slow-sink row:\n%s", out.String())
	}
}

// BenchmarkSlowSink is the slow-sink row under go test (200 files a round,
// two pairs).
func BenchmarkSlowSink(b *testing.B) {
	for b.Loop() {
		r, err := SlowSink(context.Background(), Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(mean(r.SlowSinkC1ItemsPerS), "c1-items/s")
		b.ReportMetric(mean(r.SlowSinkC8ItemsPerS), "c8-items/s")
		b.ReportMetric(r.SlowSinkRatio, "c8/c1")
	}
}

// TestNodeRedSkipped: without Node-RED the files→http row says it was
// skipped and why, and measures keep alone.
func TestNodeRedSkipped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: 20, NodeRed: "/nonexistent/node-red", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.NodeRed, "skipped: ") || r.KeepOverNodeRed != nil || r.FilesPostRounds != 1 {
		t.Fatalf("node_red %q, ratios %v, %d rounds; want skipped with its reason, no ratios, one round of keep", r.NodeRed, r.KeepOverNodeRed, r.FilesPostRounds)
	}
	var out bytes.Buffer
	r.Table(&out)
	if !strings.Contains(out.String(), "node_red") || !strings.Contains(out.String(), "/nonexistent/node-red") {
		t.Errorf("the table does not say why Node-RED was skipped:\n%s", out.String())
	}
}
