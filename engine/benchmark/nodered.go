package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Node-RED on keep's files→http job, beside keep in the same run (issue
// 40): the same drop (Stage, Drop), a sink in this process answering after
// the same delay, Node-RED's CPU and peak RSS read from /proc. Node-RED is
// not installed by keep, its tests or its CI: the row runs it when it is
// found (Options.NodeRed, else `node-red` on the PATH) and says why not
// otherwise.

// NodeRedFlows are the Node-RED flows measured: a folder watch, and a poll
// of the folder every 200 ms that moves each file out after its POST.
var NodeRedFlows = []string{"watch", "poll"}

// NodeRedRound runs Node-RED (bin) once on the files→http job with flow
// ("watch" or "poll"): n files dropped into its folder, each POSTed to a
// sink that answers after delay. dir is left to the caller to remove.
func NodeRedRound(ctx context.Context, dir, bin, flow string, n int, delay time.Duration) (*FilesPostRound, error) {
	flows := map[string]string{"watch": watchFlow, "poll": pollFlow}[flow]
	if flows == "" {
		return nil, fmt.Errorf("node-red flow %q: want watch or poll", flow)
	}
	inbox, done, staging := filepath.Join(dir, "inbox"), filepath.Join(dir, "done"), filepath.Join(dir, "staging")
	for _, d := range []string{inbox, done, staging, filepath.Join(dir, "user")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	s := &nrSink{n: n, delay: delay, first: map[string]time.Time{}, all: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	defer srv.Close()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer("INBOX", inbox, "DONE", done, "SINK", "http://"+ln.Addr().String()+"/items",
		"PORT", strconv.Itoa(port), "FLOW", filepath.Join(dir, "flow.json"), "USERDIR", filepath.Join(dir, "user"))
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(r.Replace(flows)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.js"), []byte(r.Replace(noderedSettings)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "-s", filepath.Join(dir, "settings.js"))
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := awaitPort(ctx, port, time.Minute); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	time.Sleep(2 * time.Second) // the flow deployed and its watch or poll started

	drop, err := Stage(staging, n)
	if err != nil {
		return nil, err
	}
	_, cpu0, _, err := procStat(cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	if err := drop.Drop(staging, inbox); err != nil {
		return nil, err
	}
	select {
	case <-s.all:
	case <-time.After(time.Duration(n)*(50*time.Millisecond+delay) + time.Minute):
		return nil, fmt.Errorf("node-red %s: the sink has %d of %d items after the timeout", flow, s.count(), n)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	_, cpu1, _, err := procStat(cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	hwm, _ := peakRSSKiB(cmd.Process.Pid)
	time.Sleep(2 * time.Second) // a POST sent twice would arrive by now

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repeats > 0 {
		return nil, fmt.Errorf("node-red %s: %d items POSTed more than once", flow, s.repeats)
	}
	f := &FilesPostRound{Items: n, Lat: make([]float64, 0, n), CPU: float64(cpu1-cpu0) / clockTicks, PeakRSSMB: float64(hwm) / 1024}
	var last time.Time
	for name, at := range s.first {
		f.Lat = append(f.Lat, float64(at.Sub(drop.Dropped[name]).Microseconds())/1000)
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(f.Lat)
	f.Span = last.Sub(drop.Start)
	f.ItemsPerS, f.CPUPer1000 = float64(n)/f.Span.Seconds(), f.CPU*1000/float64(n)
	return f, nil
}

// nrSink records each item's first POST, answering every POST after delay.
type nrSink struct {
	n       int
	delay   time.Duration
	mu      sync.Mutex
	first   map[string]time.Time
	repeats int
	all     chan struct{}
}

func (s *nrSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ ID string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ID == "" {
		http.Error(w, "want {\"id\": ...}", http.StatusBadRequest)
		return
	}
	at := time.Now()
	time.Sleep(s.delay)
	s.mu.Lock()
	if _, ok := s.first[body.ID]; ok {
		s.repeats++
	} else if s.first[body.ID] = at; len(s.first) == s.n {
		close(s.all)
	}
	s.mu.Unlock()
	io.WriteString(w, "{}")
}

func (s *nrSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.first)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func awaitPort(ctx context.Context, port int, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			return c.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("node-red did not open its port")
}

// nodeRedBin is the node-red command to measure beside keep, and why there
// is none when there is none.
func nodeRedBin(o Options) (string, string) {
	bin := o.NodeRed
	if bin == "" {
		bin = os.Getenv("KEEP_BENCH_NODE_RED")
	}
	if bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Sprintf("skipped: %v", err)
		}
		return p, ""
	}
	if p, err := exec.LookPath("node-red"); err == nil {
		return p, ""
	}
	return "", "skipped: node-red is not on the PATH (npm install --prefix DIR node-red@4.1, then KEEP_BENCH_NODE_RED=DIR/node_modules/.bin/node-red keep bench)"
}
