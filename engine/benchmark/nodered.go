package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Node-RED on keep's files→http job, beside keep in the same run (issue
// 40): the same drop (Stage, Drop), the same sink in this process answering
// after the same delay, the same window (round.go): Node-RED's CPU and peak
// RSS read from /proc by its pid, as keep's daemon's are. Node-RED is
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
	s := newPostSink(n, delay, false)
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
	cmd := exec.Command(bin, "-s", filepath.Join(dir, "settings.js"))
	var stderr syncBuilder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	if err := awaitPort(ctx, port, time.Minute); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	time.Sleep(settle) // the flow deployed and its watch or poll started

	drop, err := Stage(staging, n)
	if err != nil {
		return nil, err
	}
	failed := func(context.Context) error {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("node-red %s exited: %v: %s", flow, err, stderr.String())
		default:
			return nil
		}
	}
	w := window{pid: cmd.Process.Pid, done: s.done, within: roundWithin(n, delay), failed: failed}
	cpu, peak, err := w.run(ctx, drop, staging, inbox)
	if err != nil {
		return nil, fmt.Errorf("node-red %s: %w", flow, err)
	}
	time.Sleep(2 * time.Second) // a POST sent twice would arrive by now
	if err := s.check(drop.Names); err != nil {
		return nil, fmt.Errorf("node-red %s: %w", flow, err)
	}
	return roundFigures(n, drop, s.snapshot(), cpu, peak), nil
}

// syncBuilder is a strings.Builder a child process's output may be written
// to while it is read.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
