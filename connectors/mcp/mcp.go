// Package mcp offers the tools of a Model Context Protocol server as a
// connector, "mcp.NAME", so scripts call ctx.mcp.NAME.TOOL(args) under the
// ledger like any other connector (DESIGN.md §15).
//
// A tool is a read only when the config lists it in reads, or trusts the
// server's hints and the server marks it readOnlyHint; every other tool is a
// mutation. The server is started (stdio) or reached (streamable HTTP) on
// first need, restarted with back-off when it dies, and stopped by Close.
package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaKey is the _meta field of a tool call that carries keep's idempotency
// key, so a server that honours it can drop a repeated call.
const MetaKey = "keep/idempotency-key"

// Config is one [mcp.NAME] server, with its accounts already resolved.
type Config struct {
	// Name is NAME: the connector is "mcp.NAME".
	Name string
	// Command, Args and Env start a stdio server. Env values are literal.
	Command string
	Args    []string
	Env     map[string]string
	// EnvAccounts put an account's secret in an environment variable,
	// read when the server starts.
	EnvAccounts map[string]connectors.Account
	// URL reaches a streamable HTTP server; Account, when set, signs its
	// requests (Authorization header).
	URL     string
	Account connectors.Account
	// Reads are the tools that are reads; TrustHints adds those the server
	// marks readOnlyHint, and lets an idempotentHint tool be called again to
	// settle an uncertain call.
	Reads      []string
	TrustHints bool
	// Timeout bounds one tool call, from its start or its last progress
	// notification; zero: 60 s. MaxTimeout bounds it in all, however much
	// progress it reports; zero: 30 min (never less than Timeout).
	Timeout, MaxTimeout time.Duration
	// MaxMessage bounds one message from a stdio server, in bytes; a
	// longer answer fails its own call only. Zero: 16 MiB.
	MaxMessage int
	// CacheDir holds the last tool list of each server (NAME.tools.json),
	// so keep knows the tools without starting the server; "" keeps none.
	CacheDir string
	// Logger receives the server's stderr, one line a record, and its
	// starts and deaths; nil: discarded.
	Logger *slog.Logger
	// BackoffBase and BackoffMax space restarts after the server dies or
	// fails to start; zero: 1 s and 1 min.
	BackoffBase, BackoffMax time.Duration
	// Now is the clock the back-off reads; nil: time.Now.
	Now func() time.Time
}

// Connector is one MCP server.
type Connector struct {
	cfg Config
	log *slog.Logger
	// life ends with Close: listings in the background stop with it
	life context.Context
	stop context.CancelFunc

	startMu  sync.Mutex     // held while a server starts (session.go)
	retiring sync.WaitGroup // sessions given up on, being closed (session.go)
	// relisting is the listing after a start or a list_changed (relist):
	// Close waits for it, or it writes the cache after keep let go of it
	relisting sync.WaitGroup
	mu        sync.Mutex
	sess      *sdk.ClientSession
	closed    bool
	deaths    int       // failed starts and deaths since the last good call
	downAt    time.Time // when the last one happened
	tools     []*sdk.Tool
	known     bool // tools holds a list (live or cached)

	listing     chan struct{}     // open while a listing in the background runs (listing.go)
	listErr     error             // how the last listing failed; nil after one that did not
	listSeq     int64             // listings begun (listing.go)
	listHeld    int64             // the one whose list is held: an older one is not kept over it
	refreshing  bool              // a listing after list_changed runs
	again       bool              // and another list_changed came meanwhile
	changed     []func()          // told when the tool list changes
	startFails  int               // failed starts in a row
	startErr    error             // the last one's error
	taskSupport map[string]string // tool → execution.taskSupport, read off the wire (tasks.go)

	calls    sync.Map    // progress token → *deadline of a call in flight (progress.go)
	proc     *os.Process // the stdio server, for tests that kill it
	progress func()      // tests: told of each progress notification
}

var (
	_ connectors.Connector  = (*Connector)(nil)
	_ connectors.Reconciler = (*Connector)(nil)
)

// New checks cfg and returns a connector that has not started anything.
func New(cfg Config) (*Connector, error) {
	switch {
	case cfg.Name == "":
		return nil, errors.New("an MCP server needs a name")
	case (cfg.Command == "") == (cfg.URL == ""):
		return nil, fmt.Errorf("mcp.%s needs exactly one of command and url", cfg.Name)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 30 * time.Minute
	}
	cfg.MaxTimeout = max(cfg.MaxTimeout, cfg.Timeout)
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 16 << 20
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	life, stop := context.WithCancel(context.Background())
	return &Connector{cfg: cfg, log: log.With("component", "mcp", "server", cfg.Name), life: life, stop: stop}, nil
}

// Name is "mcp.NAME".
func (c *Connector) Name() string { return "mcp." + c.cfg.Name }

// Server is NAME.
func (c *Connector) Server() string { return c.cfg.Name }

// Close stops the server (stdio: closes its input, then SIGTERM after a
// grace period) and refuses further calls. Calls in flight are cut off
// first (watchProgress): a mutation among them is uncertain.
func (c *Connector) Close() error {
	c.mu.Lock()
	s := c.sess
	c.sess, c.closed = nil, true
	listing := c.listing
	c.mu.Unlock()
	c.stop()
	if listing != nil {
		<-listing // its server, started or not, is stopped with it
	}
	var err error
	if s != nil {
		err = s.Close()
	}
	c.relisting.Wait() // before retiring: a listing that fails may give up its session
	c.retiring.Wait()  // a server given up on is gone before keep is
	return err
}

// isRead says whether a tool is a read under the config.
func (c *Connector) isRead(t *sdk.Tool) bool {
	if slices.Contains(c.cfg.Reads, t.Name) {
		return true
	}
	return c.cfg.TrustHints && t.Annotations != nil && t.Annotations.ReadOnlyHint
}

// idempotent says whether a tool may be called again to settle an
// uncertain call: only when the config trusts the server's hints.
func (c *Connector) idempotent(t *sdk.Tool) bool {
	return c.cfg.TrustHints && t.Annotations != nil && t.Annotations.IdempotentHint
}

func (c *Connector) cachePath() string {
	if c.cfg.CacheDir == "" {
		return ""
	}
	// the same name may be another server in another config
	h := sha256.Sum256([]byte(strings.Join(append([]string{c.cfg.Command, c.cfg.URL}, c.cfg.Args...), "\x00")))
	return filepath.Join(c.cfg.CacheDir, fmt.Sprintf("%s-%x.tools.json", c.cfg.Name, h[:4]))
}

// loadCache reads the cached tool list; false when there is none.
func (c *Connector) loadCache() ([]*sdk.Tool, bool) {
	p := c.cachePath()
	if p == "" {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var tools []*sdk.Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		c.log.Warn("ignoring an unreadable tool cache", "path", p, "err", err)
		return nil, false
	}
	return tools, true
}

// saveCache writes the tool list atomically; a failure only costs a start.
func (c *Connector) saveCache(tools []*sdk.Tool) {
	p := c.cachePath()
	if p == "" {
		return
	}
	b, err := json.MarshalIndent(tools, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(p), 0o700)
	}
	if err == nil {
		tmp := p + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, p)
		}
	}
	if err != nil {
		c.log.Warn("could not cache the tool list", "path", p, "err", err)
	}
}

// InputTypes offers "mcp" inputs of type "item": something a workflow
// learned of through a server's tool.
func (c *Connector) InputTypes() map[string][]string { return map[string][]string{"mcp": {"item"}} }
