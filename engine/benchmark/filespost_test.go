package benchmark

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFilesPost runs the files→http row at a small scale: every file
// reaches the sink once under a key of its own (the row checks it and
// fails otherwise), and each figure is there. No target is asserted.
func TestFilesPost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: 60, DaemonBinary: keepBin, Logf: t.Logf})
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
		"files_post_peak_rss_mb": r.FilesPostPeakRSSMB,
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

// TestFilesPostCountsKeepOnly: keep's CPU figure is its daemon's and its
// workers', measured by the daemon's pid as Node-RED's process is, not the
// bench process's: two CPU-seconds burnt in this process inside a round's
// measured window do not show in it (they did when keep ran in the bench's
// process and its CPU was the process's).
func TestFilesPostCountsKeepOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var burnt float64
	burn := func(int) {
		start := ownCPU()
		for burnt < 2 {
			for i := 0; i < 1_000_000; i++ {
				spin++
			}
			burnt = ownCPU() - start
		}
	}
	const n = 40
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: n, NodeRed: "/nonexistent/node-red",
		DaemonBinary: keepBin, Logf: t.Logf, roundHook: burn})
	if err != nil {
		t.Fatal(err)
	}
	keep := r.FilesPostCPUSPer1000 * n / 1000
	if !(keep > 0) || keep >= burnt/2 {
		t.Fatalf("keep's CPU over the round: %.2f s with %.2f s burnt in the bench's process inside it; want > 0 and none of the burn", keep, burnt)
	}
}

// spin is what the burn writes, so its loop is not optimised away.
var spin int

// ownCPU is this process's own user+system CPU seconds, its children's not.
func ownCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// TestFilesPostFailsLoudly: a round whose runs fail ends with an error
// naming what the daemon holds for a person, not with figures.
func TestFilesPostFailsLoudly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fail := func(src string) string {
		return strings.Replace(src, "await ctx.http.request({", `throw new Error("failed by the bench's test"); await ctx.http.request({`, 1)
	}
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: 10, NodeRed: "/nonexistent/node-red",
		DaemonBinary: keepBin, Logf: t.Logf, editWorkflow: fail})
	if err == nil || !strings.Contains(err.Error(), "for a person") {
		t.Fatalf("FilesPost = %+v, %v; want an error naming the daemon's attention items", r, err)
	}
	t.Log(err)
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
		sink := newPostSink(2, 0, true)
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
		r, err := FilesPost(context.Background(), Options{Dir: b.TempDir(), FilesPostItems: 1000, DaemonBinary: keepBin, Logf: b.Logf})
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
	r, err := SlowSink(ctx, Options{Dir: t.TempDir(), SlowSinkItems: 30, SlowSinkPairs: 1, DaemonBinary: keepBin, Logf: t.Logf})
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
		r, err := SlowSink(context.Background(), Options{Dir: b.TempDir(), DaemonBinary: keepBin})
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
	r, err := FilesPost(ctx, Options{Dir: t.TempDir(), FilesPostItems: 20, NodeRed: "/nonexistent/node-red", DaemonBinary: keepBin, Logf: t.Logf})
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
