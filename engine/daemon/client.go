package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"time"

	"keep/engine"
)

var _ engine.API = (*Client)(nil)

const (
	// dialTimeout bounds Dial: a daemon on the same machine answers at
	// once, or it is not worth waiting for.
	dialTimeout = 5 * time.Second
	// streamOpenTimeout bounds the wait for the daemon to confirm a
	// subscription; Subscribe has no context of its own.
	streamOpenTimeout = 5 * time.Second
)

// Client is an engine.API that acts through a daemon's socket. Front ends
// hold it exactly as they would hold an in-process *engine.Engine.
type Client struct {
	path string
	http *http.Client
	info engine.Info
}

// Dial connects to the daemon listening on socketPath and asks for its
// Info. It fails at once when nothing listens there.
func Dial(socketPath string) (*Client, error) {
	// A bare connect first, for an error that says what is wrong rather
	// than one wrapped in an HTTP request.
	dctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	conn, err := dialUnix(dctx, socketPath)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("daemon: nothing listens on %s: %w", socketPath, err)
	}
	conn.Close()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialUnix(ctx, socketPath)
		},
		// One stream per subscription plus calls: a few connections at most.
		MaxIdleConns:       4,
		IdleConnTimeout:    30 * time.Second,
		DisableCompression: true,
	}
	c := &Client{path: socketPath, http: &http.Client{Transport: tr}}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	if err := c.call(ctx, "info", request{}, &c.info); err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	c.info.Mode = "attached"
	return c, nil
}

// Close releases idle connections. Open subscriptions end by their own
// cancel functions.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// call posts req to the method's endpoint and decodes the answer into out
// (nil: the answer is ignored).
func (c *Client) call(ctx context.Context, name string, req request, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("daemon: %s: %w", name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+pathPrefix+name, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("daemon: %s: %w", name, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return fmt.Errorf("daemon: %s: %w", name, transportErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return readError(name, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("daemon: %s: reading the answer: %w", name, err)
	}
	nullRawToNil(reflect.ValueOf(out))
	return nil
}

// transportErr drops the *url.Error layer, whose text names a made-up URL;
// what is under it (a dial error, the caller's context error) stays
// reachable with errors.Is.
func transportErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func readError(name string, resp *http.Response) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("daemon: %s: %s: %w", name, resp.Status, err)
	}
	var b errorBody
	if err := json.Unmarshal(data, &b); err != nil || b.Message == "" {
		return fmt.Errorf("daemon: %s: %s: %s", name, resp.Status, bytes.TrimSpace(data))
	}
	return fromWire(b)
}

// Workflows implements engine.API.
func (c *Client) Workflows(ctx context.Context) ([]engine.WorkflowView, error) {
	var out []engine.WorkflowView
	return out, c.call(ctx, "workflows", request{}, &out)
}

// Workflow implements engine.API.
func (c *Client) Workflow(ctx context.Context, name string) (*engine.WorkflowDetail, error) {
	var out *engine.WorkflowDetail
	if err := c.call(ctx, "workflow", request{Workflow: name}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Inputs implements engine.API.
func (c *Client) Inputs(ctx context.Context, workflow string, p engine.Page) ([]engine.InputView, error) {
	var out []engine.InputView
	return out, c.call(ctx, "inputs", request{Workflow: workflow, Page: page(p)}, &out)
}

// Events implements engine.API.
func (c *Client) Events(ctx context.Context, workflow string, f engine.EventFilter) ([]engine.EventView, error) {
	var out []engine.EventView
	return out, c.call(ctx, "events", request{Workflow: workflow, Filter: eventFilter(f)}, &out)
}

// Runs implements engine.API.
func (c *Client) Runs(ctx context.Context, workflow string, p engine.Page) ([]engine.RunView, error) {
	var out []engine.RunView
	return out, c.call(ctx, "runs", request{Workflow: workflow, Page: page(p)}, &out)
}

// Mutations implements engine.API.
func (c *Client) Mutations(ctx context.Context, workflow string, status string) ([]engine.MutationView, error) {
	var out []engine.MutationView
	return out, c.call(ctx, "mutations", request{Workflow: workflow, Status: status}, &out)
}

// Trace implements engine.API.
func (c *Client) Trace(ctx context.Context, runID string) ([]engine.TraceLine, error) {
	var out []engine.TraceLine
	return out, c.call(ctx, "trace", request{RunID: runID}, &out)
}

// Attention implements engine.API.
func (c *Client) Attention(ctx context.Context) ([]engine.AttentionItem, error) {
	var out []engine.AttentionItem
	return out, c.call(ctx, "attention", request{}, &out)
}

// Accounts implements engine.AccountLister.
func (c *Client) Accounts(ctx context.Context) ([]engine.AccountView, error) {
	var out []engine.AccountView
	return out, c.call(ctx, "accounts", request{}, &out)
}

// Grants implements engine.API.
func (c *Client) Grants(ctx context.Context, workflow string) ([]engine.GrantView, error) {
	var out []engine.GrantView
	return out, c.call(ctx, "grants", request{Workflow: workflow}, &out)
}

// Deploy implements engine.API.
func (c *Client) Deploy(ctx context.Context, fileName string, src []byte, name string) (*engine.DeployResult, error) {
	var out *engine.DeployResult
	if err := c.call(ctx, "deploy", request{FileName: fileName, Src: src, Name: name}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RunNow implements engine.API.
func (c *Client) RunNow(ctx context.Context, workflow string) error {
	return c.call(ctx, "run-now", request{Workflow: workflow}, nil)
}

// Pause implements engine.API.
func (c *Client) Pause(ctx context.Context, workflow string) error {
	return c.call(ctx, "pause", request{Workflow: workflow}, nil)
}

// Resume implements engine.API.
func (c *Client) Resume(ctx context.Context, workflow string) error {
	return c.call(ctx, "resume", request{Workflow: workflow}, nil)
}

// Retry implements engine.API.
func (c *Client) Retry(ctx context.Context, workflow string) error {
	return c.call(ctx, "retry", request{Workflow: workflow}, nil)
}

// Approve implements engine.API.
func (c *Client) Approve(ctx context.Context, mutationID string, always bool) error {
	return c.call(ctx, "approve", request{MutationID: mutationID, Always: always}, nil)
}

// ApproveWide implements engine.API.
func (c *Client) ApproveWide(ctx context.Context, mutationID string) error {
	return c.call(ctx, "approve-wide", request{MutationID: mutationID}, nil)
}

// Reject implements engine.API.
func (c *Client) Reject(ctx context.Context, mutationID string) error {
	return c.call(ctx, "reject", request{MutationID: mutationID}, nil)
}

// Resolve implements engine.API.
func (c *Client) Resolve(ctx context.Context, mutationID string, answer engine.Answer) error {
	return c.call(ctx, "resolve", request{MutationID: mutationID, Answer: answer}, nil)
}

// SkipEvents implements engine.API.
func (c *Client) SkipEvents(ctx context.Context, eventIDs []string) error {
	return c.call(ctx, "skip-events", request{EventIDs: eventIDs}, nil)
}

// SkipInput implements engine.API.
func (c *Client) SkipInput(ctx context.Context, inputID string) error {
	return c.call(ctx, "skip-input", request{InputID: inputID}, nil)
}

// Grant implements engine.API.
func (c *Client) Grant(ctx context.Context, workflow string, g engine.GrantView) error {
	return c.call(ctx, "grant", request{Workflow: workflow, Grant: &g}, nil)
}

// GrantReleasing implements engine.API.
func (c *Client) GrantReleasing(ctx context.Context, workflow string, g engine.GrantView) (int, error) {
	var n int
	err := c.call(ctx, "grant-releasing", request{Workflow: workflow, Grant: &g}, &n)
	return n, err
}

// Script implements engine.API.
func (c *Client) Script(ctx context.Context, workflow string) (*engine.ScriptView, error) {
	var out engine.ScriptView
	if err := c.call(ctx, "script", request{Workflow: workflow}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DryRun implements engine.API.
func (c *Client) DryRun(ctx context.Context, workflow string, opts engine.TryOptions) (*engine.TryReport, error) {
	var rep engine.TryReport
	if err := c.call(ctx, "dry-run", request{Workflow: workflow, Name: opts.Producer, Page: page{Limit: opts.Limit}}, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// Info implements engine.API: the daemon's Info as read at Dial, with Mode
// "attached".
func (c *Client) Info() engine.Info { return c.info }

// Subscribe implements engine.API. It returns once the daemon has
// subscribed on the client's behalf, so nothing that happens after it is
// missed. Like the engine's, the channel drops notifications a slow reader
// has no room for, and closes after cancel; it also closes if the daemon
// goes away (or could not be reached), which is how a front end learns that.
func (c *Client) Subscribe() (<-chan engine.Notification, func()) {
	ch := make(chan engine.Notification, 64)
	ctx, cancel := context.WithCancel(context.Background())
	body, err := c.openStream(ctx, cancel)
	if err != nil {
		cancel()
		close(ch)
		return ch, func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		defer body.Close()
		dec := json.NewDecoder(body)
		for {
			var n engine.Notification
			// cancel aborts the request, which ends this read.
			if err := dec.Decode(&n); err != nil {
				return
			}
			select {
			case ch <- n:
			default:
			}
		}
	}()
	// Waiting for the reader makes cancel leave nothing behind, and the
	// channel closed, as the engine's cancel does.
	return ch, sync.OnceFunc(func() {
		cancel()
		<-done
	})
}

func (c *Client) openStream(ctx context.Context, cancel func()) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+subscribePath, nil)
	if err != nil {
		return nil, err
	}
	t := time.AfterFunc(streamOpenTimeout, cancel)
	defer t.Stop()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("daemon: subscribe: %s", resp.Status)
	}
	return resp.Body, nil
}
