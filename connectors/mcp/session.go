package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session returns the live session, starting the server on first need. A
// server that died or failed to start is started again only after a
// back-off; a call before then fails as transient with nothing sent.
func (c *Connector) session(ctx context.Context) (*sdk.ClientSession, error) {
	// one start at a time; c.mu is not held through the handshake, so a
	// server that hangs in it holds up only what needs its session
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if s, err := c.current(); s != nil || err != nil {
		return s, err
	}
	tr, err := c.transport(ctx)
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "keep", Version: "1"}, c.clientOptions())
	// the handshake is bounded as a call is: a server that never answers
	// it would hold every caller without a deadline of its own, and with
	// startMu every other caller of this server
	hctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cctx, refused := noteRefusals(hctx)
	s, err := client.Connect(cctx, tr, nil)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.closed {
		s.Close()
		err = errors.New("keep is stopping")
	}
	if err != nil {
		c.deaths++
		c.downAt = c.cfg.Now()
		c.startFails++
		c.startErr = err
		c.log.Warn("server did not start", "err", err, "failures", c.deaths)
		if refused := refused.met(); refused != nil {
			return nil, refused // its credential, not the server, is what fails
		}
		return nil, &connectors.Error{Class: connectors.Transient, NotSent: true, Err: fmt.Errorf("mcp.%s did not start: %w", c.cfg.Name, err)}
	}
	c.sess = s
	c.startFails, c.startErr = 0, nil
	c.relist(s) // a server that starts may offer other tools than last time
	if st, ok := tr.(*stdioTransport); ok && st.cmd.Process != nil {
		c.proc = st.cmd.Process
		// the server's own pid, so keep.log lines up with ps and its crashes
		c.log.Info("server started", "pid", c.proc.Pid)
	} else {
		c.log.Info("server reached over HTTP")
	}
	go c.watch(s)
	return s, nil
}

// current is the live session, or why none may be started now (stopping,
// or in the back-off after a death); both nil: start one.
func (c *Connector) current() (*sdk.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &connectors.Error{Class: connectors.Transient, NotSent: true, Err: fmt.Errorf("mcp.%s: keep is stopping", c.cfg.Name)}
	}
	if c.sess != nil {
		return c.sess, nil
	}
	if c.deaths > 0 {
		if wait := c.downAt.Add(c.backoff()).Sub(c.cfg.Now()); wait > 0 {
			return nil, &connectors.Error{Class: connectors.Transient, NotSent: true, RetryAfter: wait,
				Err: fmt.Errorf("mcp.%s is down; starting it again in %s", c.cfg.Name, wait.Round(time.Millisecond))}
		}
	}
	return nil, nil
}

// watch notes a session's end: a death (not Close) counts towards the
// back-off, and the next call starts the server again.
func (c *Connector) watch(s *sdk.ClientSession) {
	c.down(s, s.Wait())
}

// down records that s ended, once, whoever notices first: watch, or a call
// that found the connection gone (so the next call starts the server again
// without waiting for watch). s is closed too: a session given up on while
// its server still runs (it answered what the SDK could not read, or broke
// its connection and stayed up) would otherwise leave that server running
// beside the one the next call starts, and after keep.
func (c *Connector) down(s *sdk.ClientSession, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != s {
		return // closed by Close, or already noted
	}
	c.sess = nil
	c.deaths++
	c.downAt = c.cfg.Now()
	c.log.Warn("server stopped; it starts again on the next call", "err", err, "failures", c.deaths)
	c.retiring.Add(1)
	go func() {
		defer c.retiring.Done()
		_ = s.Close() // stdio: stdin closed, then SIGTERM, then SIGKILL (stdio.go)
	}()
}

// healthy resets the back-off after a call the server answered.
func (c *Connector) healthy() {
	c.mu.Lock()
	c.deaths = 0
	c.mu.Unlock()
}

// backoff is base × 2^(deaths−1), capped.
func (c *Connector) backoff() time.Duration {
	d := c.cfg.BackoffBase
	for i := 1; i < c.deaths && d < c.cfg.BackoffMax; i++ {
		d *= 2
	}
	return min(d, c.cfg.BackoffMax)
}

// httpTransport carries every MCP session over HTTP: sessions come and go,
// the connections stay (connectors.IdleConnsPerHost of them per host, for
// a consumer's runs calling one server at once).
var httpTransport = connectors.NewHTTPTransport()

// transport builds the stdio command or the HTTP client. Account secrets
// are read here, so an expired one fails before anything is sent.
func (c *Connector) transport(ctx context.Context) (sdk.Transport, error) {
	if c.cfg.URL != "" {
		var rt http.RoundTripper = httpTransport
		if c.cfg.Account != nil {
			if _, err := c.cfg.Account.Secret(ctx); err != nil {
				return nil, err
			}
			// connectors' one credential transport: the token goes to the
			// URL's scheme, host and port only, never in clear elsewhere; a
			// 401/403 to it is a refusal of the account (refused.go)
			signed, err := connectors.NewSigned(c.refusals(rt), c.cfg.Account, c.cfg.URL)
			if err != nil {
				return nil, fmt.Errorf("mcp.%s: %w", c.cfg.Name, err)
			}
			rt = signed
		}
		rt = c.cappingAnswers(rt) // one oversized answer fails its call alone (http_cap.go)
		rt = c.sniffingTasks(rt)  // the SDK drops taskSupport (tasks_http.go)
		return &sdk.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: connectors.BoundClient(&http.Client{Transport: rt}), DisableStandaloneSSE: true}, nil
	}
	cmd := exec.Command(c.cfg.Command, c.cfg.Args...)
	cmd.Env = serverEnv(os.Environ())
	for k, v := range c.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, a := range c.cfg.EnvAccounts {
		secret, err := a.Secret(ctx)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, k+"="+secret)
	}
	cmd.Stderr = &lineLog{c: c}
	return &stdioTransport{cmd: cmd, terminate: 2 * time.Second, maxMessage: c.cfg.MaxMessage, log: c.log.Warn, onLine: c.sniffTasks}, nil
}

// lineLog writes a server's stderr to keep.log, one record a line, at most
// StderrLines a minute: past them a flooding server's lines are counted,
// not written, so it cannot push keep's own records out of the rotated log
// (nor spend keep's time formatting them).
type lineLog struct {
	c   *Connector
	buf []byte

	window  time.Time // when the current minute began
	lines   int       // lines written in it
	dropped int       // lines dropped in it
}

// StderrLines is how many lines of a server's stderr keep.log takes a
// minute.
const StderrLines = 100

func (l *lineLog) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := indexNL(l.buf)
		if i < 0 {
			break
		}
		l.emit(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 4096 { // a line without end is cut, not held
		l.emit(string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

func (l *lineLog) emit(line string) {
	if line == "" {
		return
	}
	if now := l.c.cfg.Now(); now.Sub(l.window) >= time.Minute || now.Before(l.window) {
		if l.dropped > 0 {
			l.c.log.Warn("server stderr: lines dropped", "dropped", l.dropped, "limit_per_minute", StderrLines)
		}
		l.window, l.lines, l.dropped = now, 0, 0
	}
	if l.lines >= StderrLines {
		if l.dropped == 0 {
			l.c.log.Warn("server stderr floods the log; its lines are dropped until the minute is over", "limit_per_minute", StderrLines)
		}
		l.dropped++
		return
	}
	l.lines++
	l.c.log.Info("server stderr", "line", line)
}

func indexNL(b []byte) int {
	for i, x := range b {
		if x == '\n' {
			return i
		}
	}
	return -1
}

var (
	_ io.Writer = (*lineLog)(nil)
)
