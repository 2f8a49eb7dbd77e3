package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/enginetest"
	"keep/engine/enginetest/kit"
	"keep/sandbox"
)

// notesWorkflow is kit's, its logNote logging each note (the daemon
// streams traces).
var notesWorkflow = strings.Replace(kit.NotesWorkflow, "const note = await ctx.files.read({ path: ev.payload.path });",
	"const note = await ctx.files.read({ path: ev.payload.path });\n        console.log(\"logging\", ev.payload.name);", 1)

// badWorkflow publishes to a topic it never declared.
const badWorkflow = `
export default Keep.workflow({
  name: "bad",
  topics: { "a": {} },
  producers: {
    p: { publishes: ["nope"], schedule: { interval: "5m" }, handler: async () => {} },
  },
});
`

// spy is the real engine with its subscriptions counted, so a test can see
// the server let go of one.
type spy struct {
	api.API
	live atomic.Int32
}

func (s *spy) Subscribe() (<-chan api.Notification, func()) {
	ch, cancel := s.API.Subscribe()
	s.live.Add(1)
	return ch, sync.OnceFunc(func() {
		s.live.Add(-1)
		cancel()
	})
}

// bundle is enginetest's host on the wall clock, served on a real socket.
type bundle struct {
	*enginetest.Host
	spy    *spy
	srv    *Server
	c      *Client
	dbPath string // next to the socket, not the database: Attach looks here
	sock   string
}

// setup opens a real engine on a real SQLite file and serves it on a real
// socket. The socket lives in its own short directory: t.TempDir() paths
// carry the test's name and overflow the ~104 bytes a socket path allows.
func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	h := enginetest.New(t, enginetest.Opts{SystemClock: true})
	if err := os.MkdirAll(filepath.Join(h.Root, "inbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "kd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	b := &bundle{Host: h, spy: &spy{API: wholeOf(h.E)}, dbPath: filepath.Join(sockDir, "keep.db")}
	logger := slog.New(slog.DiscardHandler)
	b.sock = SocketPath(b.dbPath)
	b.srv, err = Serve(ctx, b.spy, b.sock, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.srv.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	b.c, err = Dial(b.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.c.Close() })
	return b
}

// snapshot is every view of one workflow, read through one engine.API.
type snapshot struct {
	Workflows []api.WorkflowView
	Workflow  *api.WorkflowDetail
	Inputs    []api.InputView
	Events    []api.EventView
	Runs      []api.RunView
	Mutations []api.MutationView
	Attention []api.AttentionItem
	Grants    []api.GrantView
	Traces    map[string][]api.TraceLine
}

func read(t *testing.T, keepAPI api.API, wf string) snapshot {
	t.Helper()
	ctx := context.Background()
	var s snapshot
	var err error
	check := func(what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	s.Workflows, err = keepAPI.Workflows(ctx)
	check("workflows")
	s.Workflow, err = keepAPI.Workflow(ctx, wf)
	check("workflow")
	s.Inputs, err = keepAPI.Inputs(ctx, wf, api.Page{Limit: 100})
	check("inputs")
	s.Events, err = keepAPI.Events(ctx, wf, api.EventFilter{Limit: 100})
	check("events")
	s.Runs, err = keepAPI.Runs(ctx, wf, api.Page{Limit: 100})
	check("runs")
	s.Mutations, err = keepAPI.Mutations(ctx, wf, "")
	check("mutations")
	s.Attention, err = keepAPI.Attention(ctx)
	check("attention")
	s.Grants, err = keepAPI.Grants(ctx, wf)
	check("grants")
	s.Traces = map[string][]api.TraceLine{}
	for _, r := range s.Runs {
		s.Traces[r.ID], err = keepAPI.Trace(ctx, r.ID)
		check("trace " + r.ID)
	}
	return s
}

// sameViews fails for every view that differs between the engine and the
// client, showing both as the CLI's --json would.
func sameViews(t *testing.T, direct, remote snapshot) {
	t.Helper()
	dv, rv := reflect.ValueOf(direct), reflect.ValueOf(remote)
	for i := range dv.NumField() {
		d, r := dv.Field(i).Interface(), rv.Field(i).Interface()
		if !reflect.DeepEqual(d, r) {
			dj, _ := json.MarshalIndent(d, "", "  ")
			rj, _ := json.MarshalIndent(r, "", "  ")
			t.Errorf("%s differ:\nengine: %s\nclient: %s", dv.Type().Field(i).Name, dj, rj)
		}
	}
}

func TestDaemon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("every view read through the client equals the engine's own", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.Write("inbox/a.txt", "alpha")
		b.Write("inbox/b.txt", "beta")
		res, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Workflow != "notes" || !res.Created || res.Version != 1 {
			t.Fatalf("deploy = %+v", res)
		}
		b.Drain()
		first := read(t, wholeOf(b.E), "notes")
		if len(first.Inputs) != 2 || len(first.Events) == 0 || len(first.Runs) == 0 || len(first.Mutations) == 0 {
			t.Fatalf("the pipeline did too little to compare: %d inputs, %d events, %d runs, %d mutations",
				len(first.Inputs), len(first.Events), len(first.Runs), len(first.Mutations))
		}
		if len(first.Attention) == 0 || first.Attention[0].Kind != api.AttentionApproval {
			t.Fatalf("attention = %+v, want an approval (mutations ask by default)", first.Attention)
		}
		sameViews(t, first, read(t, b.c, "notes"))

		// Answer and grant through the client, then compare again.
		if err := b.c.Approve(ctx, first.Attention[0].ID, false); err != nil {
			t.Fatalf("approve: %v", err)
		}
		if err := b.c.Grant(ctx, "notes", api.GrantView{Capability: "files.write", Mode: "allow"}); err != nil {
			t.Fatalf("grant: %v", err)
		}
		b.Drain()
		second := read(t, wholeOf(b.E), "notes")
		if len(second.Grants) == 0 {
			t.Fatal("the grant made through the client is not there")
		}
		applied := 0
		for _, m := range second.Mutations {
			if m.Status == "applied" {
				applied++
			}
		}
		if applied == 0 {
			t.Fatalf("no mutation applied after the approval: %+v", second.Mutations)
		}
		sameViews(t, second, read(t, b.c, "notes"))

		// Pages and filters reach the engine.
		narrow := func(keepAPI api.API) snapshot {
			var s snapshot
			var err error
			if s.Inputs, err = keepAPI.Inputs(ctx, "notes", api.Page{Limit: 1}); err != nil {
				t.Fatal(err)
			}
			if s.Events, err = keepAPI.Events(ctx, "notes", api.EventFilter{Topic: "note.logged", Limit: 10}); err != nil {
				t.Fatal(err)
			}
			if s.Runs, err = keepAPI.Runs(ctx, "notes", api.Page{Filter: "receipt", Limit: 10}); err != nil {
				t.Fatal(err)
			}
			if s.Mutations, err = keepAPI.Mutations(ctx, "notes", "applied"); err != nil {
				t.Fatal(err)
			}
			return s
		}
		direct := narrow(wholeOf(b.E))
		if len(direct.Inputs) != 1 || len(direct.Mutations) != applied {
			t.Fatalf("the filters did not narrow: %d inputs, %d mutations", len(direct.Inputs), len(direct.Mutations))
		}
		sameViews(t, direct, narrow(b.c))

		// Pages from the oldest end (the TUI's G, then up) carry their
		// fields over the socket: each holds the oldest item, then the one
		// just newer.
		ends := func(keepAPI api.API) snapshot {
			var s snapshot
			oldest, err := keepAPI.Inputs(ctx, "notes", api.Page{Oldest: true, Limit: 1})
			if err != nil || len(oldest) != 1 {
				t.Fatalf("oldest input: %v %+v", err, oldest)
			}
			id, _ := strconv.ParseInt(oldest[0].InputID, 10, 64)
			newer, err := keepAPI.Inputs(ctx, "notes", api.Page{After: id, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			s.Inputs = append(oldest, newer...)
			runs, err := keepAPI.Runs(ctx, "notes", api.Page{Oldest: true, Limit: 1})
			if err != nil || len(runs) != 1 {
				t.Fatalf("oldest run: %v %+v", err, runs)
			}
			id, _ = strconv.ParseInt(runs[0].ID, 10, 64)
			newerRuns, err := keepAPI.Runs(ctx, "notes", api.Page{After: id, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			s.Runs = append(runs, newerRuns...)
			return s
		}
		direct = ends(wholeOf(b.E))
		all := read(t, wholeOf(b.E), "notes")
		if n := len(all.Inputs); len(direct.Inputs) != 2 || direct.Inputs[0].InputID != all.Inputs[n-1].InputID ||
			direct.Inputs[1].InputID != all.Inputs[n-2].InputID {
			t.Fatalf("inputs from the oldest end = %+v, want the last two of %+v", direct.Inputs, all.Inputs)
		}
		if n := len(all.Runs); len(direct.Runs) != 2 || direct.Runs[0].ID != all.Runs[n-1].ID || direct.Runs[1].ID != all.Runs[n-2].ID {
			t.Fatalf("runs from the oldest end = %+v, want the last two of %+v", direct.Runs, all.Runs)
		}
		sameViews(t, direct, ends(b.c))
	})

	t.Run("every answer reaches the engine with its arguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		// Each fails, so the engine's state stays put and the same call can
		// be made directly; the messages name the arguments.
		calls := map[string]func(api.API) error{
			"retry":        func(a api.API) error { return a.Retry(ctx, "notes") },
			"retry nope":   func(a api.API) error { return a.Retry(ctx, "nope") },
			"approve":      func(a api.API) error { return a.Approve(ctx, "991", true) },
			"reject":       func(a api.API) error { return a.Reject(ctx, "992") },
			"resolve":      func(a api.API) error { return a.Resolve(ctx, "993", api.Happened) },
			"resolve bad":  func(a api.API) error { return a.Resolve(ctx, "1", "maybe") },
			"skip events":  func(a api.API) error { return a.SkipEvents(ctx, []string{"994"}) },
			"skip input":   func(a api.API) error { return a.SkipInput(ctx, "995") },
			"resume":       func(a api.API) error { return a.Resume(ctx, "notes") },
			"grant nope":   func(a api.API) error { return a.Grant(ctx, "nope", api.GrantView{Capability: "files.write"}) },
			"trace nope":   func(a api.API) error { _, err := a.Trace(ctx, "996"); return err },
			"inputs nope":  func(a api.API) error { _, err := a.Inputs(ctx, "nope", api.Page{}); return err },
			"events nope":  func(a api.API) error { _, err := a.Events(ctx, "nope", api.EventFilter{}); return err },
			"runs nope":    func(a api.API) error { _, err := a.Runs(ctx, "nope", api.Page{}); return err },
			"grants nope":  func(a api.API) error { _, err := a.Grants(ctx, "nope"); return err },
			"deploy named": func(a api.API) error { _, err := a.Deploy(ctx, "bad.js", []byte(badWorkflow), "x"); return err },
		}
		for name, call := range calls {
			direct, remote := call(wholeOf(b.E)), call(b.c)
			if direct == nil {
				t.Errorf("%s: the engine accepted it; pick a failing call", name)
				continue
			}
			if remote == nil || remote.Error() != direct.Error() {
				t.Errorf("%s: client says %v, engine says %v", name, remote, direct)
				continue
			}
			for _, sentinel := range []error{engine.ErrRefused, engine.ErrNotFound} {
				if errors.Is(remote, sentinel) != errors.Is(direct, sentinel) {
					t.Errorf("%s: errors.Is(%v, %v) differs across the socket", name, remote, sentinel)
				}
			}
		}
	})

	t.Run("run-now is refused while the workflow is paused, in the engine's words", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		if err := b.c.Pause(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		err := b.c.RunNow(ctx, "notes")
		if !errors.Is(err, engine.ErrRefused) {
			t.Fatalf("run-now = %v, want refused", err)
		}
		direct := b.E.RunNow(ctx, "notes")
		if direct == nil || err.Error() != direct.Error() {
			t.Errorf("message %q, engine says %v", err, direct)
		}
		if errors.Is(err, engine.ErrNotFound) {
			t.Error("a refusal also reads as not found")
		}
		if err := b.c.Resume(ctx, "notes"); err != nil {
			t.Fatalf("resume: %v", err)
		}
		if err := b.c.RunNow(ctx, "notes"); err != nil {
			t.Fatalf("run-now after resume: %v", err)
		}
	})

	t.Run("an unknown workflow is not found, in the engine's words", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.c.Workflow(ctx, "nope")
		if !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("workflow = %v, want not found", err)
		}
		_, direct := b.E.Workflow(ctx, "nope")
		if err.Error() != direct.Error() {
			t.Errorf("message %q, engine says %q", err, direct)
		}
		if err := b.c.Pause(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("pause = %v, want not found", err)
		}
	})

	t.Run("any other error keeps its message", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		g := api.GrantView{Capability: "nonsense"}
		err := b.c.Grant(ctx, "notes", g)
		direct := b.E.Grant(ctx, "notes", g)
		if err == nil || direct == nil || err.Error() != direct.Error() {
			t.Fatalf("grant = %v, engine says %v", err, direct)
		}
		if errors.Is(err, engine.ErrRefused) || errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%v reads as a sentinel it never wrapped", err)
		}
	})

	t.Run("a bad script comes back as a validation error with its diagnostics", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.c.Deploy(ctx, "bad.js", []byte(badWorkflow), "")
		var ve *sandbox.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("deploy = %v (%T), want a validation error", err, err)
		}
		_, direct := b.E.Deploy(ctx, "bad.js", []byte(badWorkflow), "")
		var dve *sandbox.ValidationError
		if !errors.As(direct, &dve) {
			t.Fatalf("the engine says %v", direct)
		}
		if len(ve.Diagnostics) == 0 || !reflect.DeepEqual(ve.Diagnostics, dve.Diagnostics) {
			t.Errorf("diagnostics %+v, engine's %+v", ve.Diagnostics, dve.Diagnostics)
		}
		if err.Error() != direct.Error() {
			t.Errorf("message %q, engine says %q", err, direct)
		}
	})

	t.Run("a method the daemon does not know is a clear error, not a hang", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		err := b.c.call(ctx, "frobnicate", request{}, nil)
		if err == nil || !strings.Contains(err.Error(), "no method POST /v1/frobnicate") {
			t.Fatalf("unknown method = %v", err)
		}
		if errors.Is(err, engine.ErrNotFound) {
			t.Error("an unknown method reads as an unknown workflow")
		}
	})

	t.Run("a subscriber hears a pause made through the socket", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		ch, cancel := b.c.Subscribe()
		defer cancel()
		if err := b.c.Pause(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(10 * time.Second)
		for {
			select {
			case n, ok := <-ch:
				if !ok {
					t.Fatal("the stream closed before the notification")
				}
				if n.Kind == api.NoteWorkflowPaused {
					if n.Workflow != "notes" {
						t.Errorf("notification %+v names another workflow", n)
					}
					return
				}
			case <-timeout:
				t.Fatal("no workflow.paused notification")
			}
		}
	})

	t.Run("cancelling a subscription closes its channel and the server lets go of the engine's", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ch, cancel := b.c.Subscribe()
		if got := b.spy.live.Load(); got != 1 {
			t.Fatalf("engine subscriptions after Subscribe = %d, want 1", got)
		}
		cancel()
		cancel() // a second cancel is harmless
		if _, ok := enginetest.WaitRecv(t, ch, enginetest.Timeout); ok {
			t.Fatal("the channel is open after cancel")
		}
		enginetest.Until(t, enginetest.Timeout, "the server lets go of the engine subscription of a client that went away",
			func() bool { return b.spy.live.Load() == 0 })
	})

	t.Run("closing the server ends its streams and removes the socket", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ch, cancel := b.c.Subscribe()
		defer cancel()
		closeCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		if err := b.srv.Close(closeCtx); err != nil {
			t.Fatalf("close: %v", err)
		}
		if _, err := os.Lstat(b.sock); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("socket after close: %v", err)
		}
		select {
		case _, ok := <-ch:
			if ok {
				t.Fatal("a notification after close")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stream is still open after close")
		}
		if _, ok := Attach(b.dbPath); ok {
			t.Error("attached to a closed daemon")
		}
		if _, err := b.c.Workflows(ctx); err == nil {
			t.Error("a call succeeded after close")
		}
	})

	t.Run("the socket is private to its owner", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		fi, err := os.Lstat(b.sock)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
		}
		if filepath.Dir(b.sock) != filepath.Dir(b.dbPath) {
			t.Errorf("socket %s is not next to the database %s", b.sock, b.dbPath)
		}
	})

	t.Run("a socket path that fits the limit is served, however close to it", func(t *testing.T) {
		t.Parallel()
		h := enginetest.New(t, enginetest.Opts{SystemClock: true})
		dir, err := os.MkdirTemp("", "kd")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		// Linux's sun_path holds 107 bytes and a NUL: a name of exactly
		// 107 bytes fits; nothing keep adds on the way may overflow it.
		sock := filepath.Join(dir, strings.Repeat("s", 107-len(dir)-1))
		srv, err := Serve(ctx, wholeOf(h.E), sock, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("serve on a %d-byte path: %v", len(sock), err)
		}
		defer srv.Close(context.Background())
		fi, err := os.Lstat(sock)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
		}
		c, err := Dial(sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Workflows(ctx); err != nil {
			t.Errorf("a call on the long path: %v", err)
		}
	})

	t.Run("a data directory deeper than a socket path allows is served too", func(t *testing.T) {
		t.Parallel()
		if _, err := os.Stat("/proc/self/fd"); err != nil {
			t.Skip("no /proc/self/fd on this system: a socket path is bound as it is")
		}
		h := enginetest.New(t, enginetest.Opts{SystemClock: true})
		dir, err := os.MkdirTemp("", "kd")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		deep := filepath.Join(dir, strings.Repeat("d", 90), strings.Repeat("e", 90))
		if err := os.MkdirAll(deep, 0o700); err != nil {
			t.Fatal(err)
		}
		sock := SocketPath(filepath.Join(deep, "keep.db"))
		srv, err := Serve(ctx, wholeOf(h.E), sock, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("serve on a %d-byte path: %v", len(sock), err)
		}
		fi, err := os.Lstat(sock)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
		}
		c, ok := Attach(filepath.Join(deep, "keep.db"))
		if !ok {
			t.Fatalf("no daemon found on the %d-byte path", len(sock))
		}
		if _, err := c.Workflows(ctx); err != nil {
			t.Errorf("a call on the long path: %v", err)
		}
		c.Close()
		if _, err := Serve(ctx, wholeOf(h.E), sock, nil); err == nil || !strings.Contains(err.Error(), "another daemon answers") {
			t.Errorf("a second daemon on the same long path: %v, want refused", err)
		}
		if err := srv.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("socket left behind after Close: %v", err)
		}
		if _, err := Dial(sock); err == nil || !strings.Contains(err.Error(), sock) {
			t.Errorf("dial after Close: %v, want an error naming %s", err, sock)
		}
		// a name no address can hold is refused at once, by name, rather
		// than served where no client could connect
		long := filepath.Join(deep, strings.Repeat("n", 120)+".sock")
		if _, err := Serve(ctx, wholeOf(h.E), long, nil); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("serve on a %d-byte name: %v, want refused as too long", len(filepath.Base(long)), err)
		}
		if _, err := os.Lstat(long); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a socket was left at the refused name: %v", err)
		}
	})

	t.Run("attach finds the daemon next to the database and says it is attached", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c, ok := Attach(b.dbPath)
		if !ok {
			t.Fatal("no daemon found")
		}
		defer c.Close()
		want := b.E.Info()
		want.Mode = "attached"
		if got := c.Info(); got != want {
			t.Errorf("info = %+v, want %+v", got, want)
		}
		if _, err := c.Workflows(ctx); err != nil {
			t.Errorf("workflows: %v", err)
		}
	})

	t.Run("attach finds nothing where no daemon runs", func(t *testing.T) {
		t.Parallel()
		dir, err := os.MkdirTemp("", "kd")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if _, ok := Attach(filepath.Join(dir, "keep.db")); ok {
			t.Error("attached with no socket file")
		}
		if _, err := Dial(SocketPath(filepath.Join(dir, "keep.db"))); err == nil {
			t.Error("dial succeeded with nothing listening")
		}
	})

	t.Run("a stale socket is replaced and a live one is refused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		dir, err := os.MkdirTemp("", "kd")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		dbPath := filepath.Join(dir, "keep.db")
		// A daemon that died leaves its socket file behind.
		ln, err := net.Listen("unix", SocketPath(dbPath))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		if _, ok := Attach(dbPath); ok {
			t.Fatal("attached to a stale socket")
		}
		srv, err := Serve(ctx, wholeOf(b.E), SocketPath(dbPath), nil)
		if err != nil {
			t.Fatalf("serve over a stale socket: %v", err)
		}
		defer srv.Close(ctx)
		if _, ok := Attach(dbPath); !ok {
			t.Error("the replacing daemon does not answer")
		}
		if _, err := Serve(ctx, wholeOf(b.E), SocketPath(dbPath), nil); err == nil {
			t.Error("a second daemon took over a live socket")
		}
		if _, err := b.c.Workflows(ctx); err != nil {
			t.Errorf("the first daemon stopped answering: %v", err)
		}
	})

	t.Run("a file that is not a socket is left alone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		dir, err := os.MkdirTemp("", "kd")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := SocketPath(filepath.Join(dir, "keep.db"))
		if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Serve(ctx, wholeOf(b.E), path, nil); err == nil {
			t.Fatal("served over a regular file")
		}
		if data, _ := os.ReadFile(path); string(data) != "mine" {
			t.Error("the file was replaced")
		}
	})
}
