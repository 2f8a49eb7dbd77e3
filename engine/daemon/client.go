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
	"keep/engine/api"
)

var _ api.API = (*Client)(nil)

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
	info api.Info
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
		return nil, fmt.Errorf("daemon: %w", away(socketPath, err))
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
	info, err := infoRoute.call(ctx, c, request{})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	c.info = info
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
		return fmt.Errorf("daemon: %s: %w", name, away(c.path, transportErr(err)))
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
func (c *Client) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	return workflowsRoute.call(ctx, c, request{})
}

// Workflow implements engine.API.
func (c *Client) Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error) {
	return workflowRoute.call(ctx, c, request{Workflow: name})
}

// Inputs implements engine.API.
func (c *Client) Inputs(ctx context.Context, workflow string, p api.Page) ([]api.InputView, error) {
	return inputsRoute.call(ctx, c, request{Workflow: workflow, Page: page(p)})
}

// Events implements engine.API.
func (c *Client) Events(ctx context.Context, workflow string, f api.EventFilter) ([]api.EventView, error) {
	return eventsRoute.call(ctx, c, request{Workflow: workflow, Filter: eventFilter(f)})
}

// Runs implements engine.API.
func (c *Client) Runs(ctx context.Context, workflow string, p api.Page) ([]api.RunView, error) {
	return runsRoute.call(ctx, c, request{Workflow: workflow, Page: page(p)})
}

// Mutations implements engine.API.
func (c *Client) Mutations(ctx context.Context, workflow string, status string) ([]api.MutationView, error) {
	return mutationsRoute.call(ctx, c, request{Workflow: workflow, Status: status})
}

// Trace implements engine.API.
func (c *Client) Trace(ctx context.Context, runID string) ([]api.TraceLine, error) {
	return traceRoute.call(ctx, c, request{RunID: runID})
}

// Attention implements engine.API.
func (c *Client) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	return attentionRoute.call(ctx, c, request{})
}

// Accounts implements engine.AccountLister.
func (c *Client) Accounts(ctx context.Context) ([]engine.AccountView, error) {
	return accountsRoute.call(ctx, c, request{})
}

// Grants implements engine.API.
func (c *Client) Grants(ctx context.Context, workflow string) ([]api.GrantView, error) {
	return grantsRoute.call(ctx, c, request{Workflow: workflow})
}

// Deploy implements engine.API.
func (c *Client) Deploy(ctx context.Context, fileName string, src []byte, name string) (*api.DeployResult, error) {
	return deployRoute.call(ctx, c, request{FileName: fileName, Src: src, Name: name})
}

// RunNow implements engine.API.
func (c *Client) RunNow(ctx context.Context, workflow string) error {
	return runNowRoute.call(ctx, c, request{Workflow: workflow})
}

// Pause implements engine.API.
func (c *Client) Pause(ctx context.Context, workflow string) error {
	return pauseRoute.call(ctx, c, request{Workflow: workflow})
}

// Resume implements engine.API.
func (c *Client) Resume(ctx context.Context, workflow string) error {
	return resumeRoute.call(ctx, c, request{Workflow: workflow})
}

// Retry implements engine.API.
func (c *Client) Retry(ctx context.Context, workflow string) error {
	return retryRoute.call(ctx, c, request{Workflow: workflow})
}

// Approve implements engine.API.
func (c *Client) Approve(ctx context.Context, mutationID string, always bool) error {
	return approveRoute.call(ctx, c, request{MutationID: mutationID, Always: always})
}

// ApproveWide implements engine.API.
func (c *Client) ApproveWide(ctx context.Context, mutationID string) error {
	return approveWideRoute.call(ctx, c, request{MutationID: mutationID})
}

// Reject implements engine.API.
func (c *Client) Reject(ctx context.Context, mutationID string) error {
	return rejectRoute.call(ctx, c, request{MutationID: mutationID})
}

// Resolve implements engine.API.
func (c *Client) Resolve(ctx context.Context, mutationID string, answer api.Answer) error {
	return resolveRoute.call(ctx, c, request{MutationID: mutationID, Answer: answer})
}

// SkipEvents implements engine.API.
func (c *Client) SkipEvents(ctx context.Context, eventIDs []string) error {
	return skipEventsRoute.call(ctx, c, request{EventIDs: eventIDs})
}

// SkipInput implements engine.API.
func (c *Client) SkipInput(ctx context.Context, inputID string) error {
	return skipInputRoute.call(ctx, c, request{InputID: inputID})
}

// Grant implements engine.API.
func (c *Client) Grant(ctx context.Context, workflow string, g api.GrantView) error {
	return grantRoute.call(ctx, c, request{Workflow: workflow, Grant: &g})
}

// GrantReleasing implements engine.API.
func (c *Client) GrantReleasing(ctx context.Context, workflow string, g api.GrantView) (int, error) {
	return grantReleasingRoute.call(ctx, c, request{Workflow: workflow, Grant: &g})
}

// Script implements engine.API.
func (c *Client) Script(ctx context.Context, workflow string) (*api.ScriptView, error) {
	return scriptRoute.call(ctx, c, request{Workflow: workflow})
}

// DryRun implements engine.API.
func (c *Client) DryRun(ctx context.Context, workflow string, opts api.TryOptions) (*api.TryReport, error) {
	return dryRunRoute.call(ctx, c, request{Workflow: workflow, Name: opts.Producer, Page: page{Limit: opts.Limit}})
}

// Info implements engine.API: the daemon's Info as read at Dial, with Mode
// "attached".
func (c *Client) Info() api.Info { return c.info }

// Subscribe implements engine.API. It returns once the daemon has
// subscribed on the client's behalf, so nothing that happens after it is
// missed. Like the engine's, the channel drops notifications a slow reader
// has no room for, and closes after cancel; it also closes if the daemon
// goes away (or could not be reached), which is how a front end learns that.
func (c *Client) Subscribe() (<-chan api.Notification, func()) { return c.subscribe(false) }

// SubscribeScreen implements engine.API: Subscribe as a screen a person
// watches, so the daemon hands it what is meant for the person too.
func (c *Client) SubscribeScreen() (<-chan api.Notification, func()) { return c.subscribe(true) }

func (c *Client) subscribe(screen bool) (<-chan api.Notification, func()) {
	ch := make(chan api.Notification, 64)
	ctx, cancel := context.WithCancel(context.Background())
	body, err := c.openStream(ctx, cancel, screen)
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
			var n api.Notification
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

func (c *Client) openStream(ctx context.Context, cancel func(), screen bool) (io.ReadCloser, error) {
	u := baseURL + subscribePath
	if screen {
		u += "?" + screenParam + "=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
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
