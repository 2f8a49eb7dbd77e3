package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's tool list is refreshed when the server starts and when it
// says its tools changed (notifications/tools/list_changed); whoever asked
// through OnToolsChanged is told when the list is new or differs. Nothing
// that only reads the list waits on a server: Methods answers from what is
// held or cached and lists in the background (AwaitTools waits for that,
// bounded, where a command needs the tools of a server it names).

// clientOptions are the session's handlers.
func (c *Connector) clientOptions() *sdk.ClientOptions {
	o := &sdk.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) { c.toolsChanged(req.Session) },
	}
	o.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		c.onProgress(req.Params.ProgressToken)
	}
	return o
}

// OnToolsChanged registers f, called (on its own goroutine's time, never
// under the connector's lock) when the tool list becomes known or changes.
func (c *Connector) OnToolsChanged(f func()) {
	c.mu.Lock()
	c.changed = append(c.changed, f)
	c.mu.Unlock()
}

// toolsChanged lists the tools over s again, in the background. However
// many notifications a server sends, one listing runs at a time, and one
// more after it when any came meanwhile: a listing per notification let a
// server flooding list_changed have keep send as many tools/list at once
// (and write the cache as many times).
func (c *Connector) toolsChanged(s *sdk.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.relist(s)
}

// relist is toolsChanged with c.mu held.
func (c *Connector) relist(s *sdk.ClientSession) {
	if c.refreshing {
		c.again = true
		return
	}
	if c.closed {
		return
	}
	c.refreshing = true
	c.relisting.Add(1)
	go func() {
		defer c.relisting.Done()
		for {
			c.refresh(s)
			c.mu.Lock()
			if !c.again {
				c.refreshing = false
				c.mu.Unlock()
				return
			}
			c.again = false
			c.mu.Unlock()
		}
	}()
}

// refresh lists the tools over s, as the server has them now.
func (c *Connector) refresh(s *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(c.life, c.cfg.Timeout)
	defer cancel()
	if _, err := c.listOn(ctx, s); err != nil {
		c.log.Warn("cannot list tools", "err", err)
	}
}

// listOn lists the tools over s, keeps and caches the list, and tells the
// watchers when it differs from the one held.
func (c *Connector) listOn(ctx context.Context, s *sdk.ClientSession) ([]*sdk.Tool, error) {
	c.mu.Lock()
	c.listSeq++
	seq := c.listSeq
	c.mu.Unlock()
	// a listing is bounded as a call is, whoever asks for it: one that a
	// call needs (no list held yet) or `keep mcp tools` would otherwise
	// wait on the caller's context alone, for good on a server that never
	// answers tools/list
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	ctx, slot := noteRefusals(ctx)
	tools, err := c.pages(ctx, s)
	if err != nil {
		if refused := slot.met(); refused != nil {
			c.down(s, err)      // the SDK gives up on a session refused
			return nil, refused // sign in, not try again
		}
		if errors.Is(err, sdk.ErrConnectionClosed) {
			c.down(s, err)
		}
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s: listing tools: %v", c.cfg.Name, err)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	c.mu.Lock()
	c.markTasks(tools)
	c.mu.Unlock()
	c.saveCache(tools)
	c.mu.Lock()
	if seq < c.listHeld {
		// a listing begun later is held already: this answer is older
		c.mu.Unlock()
		return tools, nil
	}
	c.listHeld = seq
	old, had := c.tools, c.known
	c.tools, c.known, c.listErr = tools, true, nil
	watchers := slices.Clone(c.changed)
	c.mu.Unlock()
	if !had || !sameTools(old, tools) {
		if had {
			c.log.Info("the server's tools changed", "tools", len(tools))
		}
		for _, f := range watchers {
			f()
		}
	}
	return tools, nil
}

// MaxTools is the most tools keep takes from one server.
const MaxTools = 10000

// pages lists the tools page by page, within keep's bounds on a listing:
// MaxTools tools, MaxMessage bytes of them in all, and no cursor met
// twice. The SDK's iterator follows a server's next page for as long as
// the server names one, holding every tool: a server whose list has no
// end (a new page after each, or the same one again) took keep's memory,
// or its time, until the listing's context ended.
func (c *Connector) pages(ctx context.Context, s *sdk.ClientSession) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	size := 0
	seen := map[string]bool{}
	params := &sdk.ListToolsParams{}
	for {
		res, err := s.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if b, err := json.Marshal(t); err == nil {
				size += len(b)
			}
		}
		tools = append(tools, res.Tools...)
		switch {
		case len(tools) > MaxTools:
			return nil, fmt.Errorf("the tool list is over keep's limit of %d tools", MaxTools)
		case size > c.cfg.MaxMessage:
			return nil, fmt.Errorf("the tool list is over keep's limit of %d bytes", c.cfg.MaxMessage)
		case res.NextCursor == "":
			return tools, nil
		case seen[res.NextCursor]:
			return nil, fmt.Errorf("the tool list has no end: its page %q comes again", clip(res.NextCursor, 40))
		}
		seen[res.NextCursor] = true
		params.Cursor = res.NextCursor
	}
}

func sameTools(a, b []*sdk.Tool) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// held is the tool list without reaching the server: the one held, else
// the cached one; false when there is neither.
func (c *Connector) held() ([]*sdk.Tool, bool) {
	c.mu.Lock()
	if c.known {
		t := c.tools
		c.mu.Unlock()
		return t, true
	}
	c.mu.Unlock()
	tools, ok := c.loadCache()
	if !ok {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known { // a live listing that finished meanwhile wins
		c.tools, c.known = tools, true
	}
	return c.tools, true
}

// Known says whether the tool list is known without reaching the server.
func (c *Connector) Known() bool {
	_, ok := c.held()
	return ok
}

// listInBackground starts one listing, unless one runs; the returned
// channel closes when it ends. A server in its back-off answers at once.
func (c *Connector) listInBackground() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listing != nil {
		return c.listing
	}
	ch := make(chan struct{})
	c.listing = ch
	go func() {
		ctx, cancel := context.WithTimeout(c.life, c.cfg.Timeout)
		_, err := c.Tools(ctx)
		cancel()
		c.mu.Lock()
		c.listing = nil
		if err != nil {
			c.listErr = err
		}
		c.mu.Unlock()
		if err != nil {
			c.log.Warn("cannot list tools", "err", err)
		}
		close(ch)
	}()
	return ch
}

// AwaitTools makes the tool list known, listing the server if need be and
// waiting for it as long as ctx allows; the error says why it is not.
func (c *Connector) AwaitTools(ctx context.Context) error {
	if c.Known() {
		return nil
	}
	select {
	case <-c.listInBackground():
	case <-ctx.Done():
		return connectors.Errorf(connectors.Transient, "mcp.%s: its tools are not listed yet: %v", c.cfg.Name, ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known {
		return nil
	}
	return c.listErr
}

// ListProblem says why the tool list is not known: "" when it is, or
// when no listing has failed yet.
func (c *Connector) ListProblem() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known || c.listErr == nil {
		return ""
	}
	return c.listErr.Error()
}

// StartFailures are the failed starts in a row and the last one's error.
func (c *Connector) StartFailures() (int, error) {
	n, err, _ := c.startFailures()
	return n, err
}

// StartProblem says, after repeated failed starts, why the server does not
// start and since when; "" while it starts, or has failed fewer than
// StartFailuresShown times in a row.
func (c *Connector) StartProblem() (string, time.Time) {
	n, err, at := c.startFailures()
	if n < StartFailuresShown || err == nil {
		return "", time.Time{}
	}
	return fmt.Sprintf("%v (%d tries in a row)", err, n), at
}

// StartFailuresShown is how many failed starts in a row make a problem the
// person sees: one may be a server's slow first download.
const StartFailuresShown = 3

func (c *Connector) startFailures() (int, error, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startFails, c.startErr, c.downAt
}
