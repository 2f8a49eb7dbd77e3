// Command nodered measures Node-RED on keep bench's files→http job, for the
// comparison in engine/benchmark/README.md: n files renamed into a folder
// at once, one POST each to a sink in this process that answers after a
// fixed delay. It prints items/s, the drop-to-POST p50 and p99, Node-RED's
// CPU-seconds per 1,000 items (its process's, read from /proc; the sink's
// are this process's), the POSTs repeated and the files left behind.
//
//	npm install --prefix /tmp/nr node-red@4.1
//	go run ./engine/benchmark/testdata/nodered -node-red /tmp/nr/node_modules/.bin/node-red -flow poll
//
// It is not part of the test suite: it needs Node.js and Node-RED.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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

	"keep/engine/benchmark"
)

func main() {
	bin := flag.String("node-red", "node-red", "the node-red command")
	flow := flag.String("flow", "watch", "watch (a folder watch) or poll (list every 200 ms, move after a 2xx)")
	n := flag.Int("n", 1000, "files dropped at once")
	delay := flag.Duration("delay", time.Millisecond, "how long the sink waits before answering")
	port := flag.Int("port", 18801, "Node-RED's port")
	flag.Parse()
	if err := run(*bin, *flow, *n, *delay, *port); err != nil {
		fmt.Fprintln(os.Stderr, "nodered:", err)
		os.Exit(1)
	}
}

func run(bin, flow string, n int, delay time.Duration, port int) error {
	flows := map[string]string{"watch": watchFlow, "poll": pollFlow}[flow]
	if flows == "" {
		return fmt.Errorf("-flow %q: want watch or poll", flow)
	}
	dir, err := os.MkdirTemp("", "nodered-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inbox, done, staging := filepath.Join(dir, "inbox"), filepath.Join(dir, "done"), filepath.Join(dir, "staging")
	for _, d := range []string{inbox, done, staging, filepath.Join(dir, "user")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}

	s := &sink{n: n, delay: delay, first: map[string]time.Time{}, all: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(ln, s)

	r := strings.NewReplacer("INBOX", inbox, "DONE", done, "SINK", "http://"+ln.Addr().String()+"/items",
		"PORT", strconv.Itoa(port), "FLOW", filepath.Join(dir, "flow.json"), "USERDIR", filepath.Join(dir, "user"))
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(r.Replace(flows)), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.js"), []byte(r.Replace(settings)), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "-s", filepath.Join(dir, "settings.js"))
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := awaitPort(port, time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // the flow deployed and its watch or poll started

	drop, err := benchmark.Stage(staging, n)
	if err != nil {
		return err
	}
	cpu0, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return err
	}
	if err := drop.Drop(staging, inbox); err != nil {
		return err
	}
	select {
	case <-s.all:
	case <-time.After(time.Duration(n)*50*time.Millisecond + time.Minute):
		return fmt.Errorf("the sink has %d of %d items after the timeout", s.count(), n)
	}
	cpu1, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // a POST sent twice would arrive by now

	s.mu.Lock()
	defer s.mu.Unlock()
	var lat []float64
	var last time.Time
	for name, at := range s.first {
		lat = append(lat, float64(at.Sub(drop.Dropped[name]).Microseconds())/1000)
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lat)
	left, _ := os.ReadDir(inbox)
	span := last.Sub(drop.Start).Seconds()
	fmt.Printf("node-red %s: %d files, %.1f items/s, p50 %.0f ms, p99 %.0f ms, %.2f CPU-s per 1,000, %d POSTs repeated, %d files left in the folder (sink delay %s)\n",
		flow, n, float64(n)/span, lat[len(lat)/2], lat[len(lat)*99/100], float64(cpu1-cpu0)/clockTicks*1000/float64(n), s.repeats, len(left), delay)
	return nil
}

// sink records each item's first POST, answering every POST after delay.
type sink struct {
	n       int
	delay   time.Duration
	mu      sync.Mutex
	first   map[string]time.Time
	repeats int
	all     chan struct{}
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.first)
}

func awaitPort(port int, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			return c.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("node-red did not open its port")
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

// cpuTicks is the user+system time of process pid, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime, nil
}
