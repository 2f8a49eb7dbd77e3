package authoring

// What keep mcp serve offers besides its tools: which database it serves
// and whether an engine runs it, the API reference and keep.d.ts as
// resources, and prompts that start from keep's own reference.

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"keep/engine"
	"keep/engine/authoring/model"
	"keep/engine/reference"
)

// MCPServeWhere says which database keep mcp serve serves and whether an
// engine runs it, for stderr and the status tool.
func MCPServeWhere(o MCPServeOpts) string {
	if o.engineRuns() {
		return fmt.Sprintf("keep mcp serve: serving %s through the keep engine running it (pid %d)", o.DB, o.API.Info().PID)
	}
	return fmt.Sprintf("keep mcp serve: serving %s; no keep engine is running on it: workflows run, and proposals you accept deploy, when one starts: keep --daemon (or keep, the TUI)", o.DB)
}

// mcpServeStatus is the status tool's answer when it names no workflow.
type mcpServeStatus struct {
	DB         string `json:"db"`
	EngineRuns bool   `json:"engine_running"`
	Note       string `json:"note"`
}

// withNote adds, when no engine runs, the note that nothing runs.
func (h mcpHandlers) withNote(res *sdk.CallToolResult, err error) (*sdk.CallToolResult, error) {
	if err == nil && res != nil && !res.IsError && !h.o.engineRuns() {
		res.Content = append(res.Content, &sdk.TextContent{Text: MCPServeWhere(h.o)})
	}
	return res, err
}

const (
	mcpResReference = "keep://reference"
	mcpResDTS       = "keep://keep.d.ts"
)

// addResources offers the reference and keep.d.ts, built from the config's
// connectors (MCP servers' tools included) when read.
func (h mcpHandlers) addResources(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: mcpResReference, Name: "reference", MIMEType: "text/plain",
		Description: "keep's scripting reference: phases, ctx operations, every connector method with its types"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			text, err := h.referenceText(ctx, "")
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: mcpResReference, MIMEType: "text/plain", Text: text}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: mcpResDTS, Name: "keep.d.ts", MIMEType: "application/typescript",
		Description: "TypeScript declarations of the same API, for an editor or a type checker"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			engine.AwaitMCPServers(ctx, h.o.Registry, "")
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: mcpResDTS, MIMEType: "application/typescript",
				Text: reference.Build(h.o.Registry).DTS()}}}, nil
		})
}

func (h mcpHandlers) referenceText(ctx context.Context, connector string) (string, error) {
	engine.AwaitMCPServers(ctx, h.o.Registry, connector)
	ref := reference.Build(h.o.Registry)
	if connector != "" {
		var err error
		if ref, err = ref.Only(connector); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	err := ref.WriteText(&b)
	return b.String(), err
}

// MCPServePrompts are the prompts keep mcp serve offers.
var MCPServePrompts = []string{"write-workflow", "explain-wait"}

// addPrompts offers "write a workflow that …" and "explain why WORKFLOW
// waits", each carrying keep's own reference or state.
func (h mcpHandlers) addPrompts(s *sdk.Server) {
	s.AddPrompt(&sdk.Prompt{Name: "write-workflow", Title: "Write a keep workflow",
		Description: "Write a keep workflow that does what you describe, from keep's reference; check it with validate and try, then propose it.",
		Arguments:   []*sdk.PromptArgument{{Name: "task", Description: "what the workflow should do", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			task := strings.TrimSpace(req.Params.Arguments["task"])
			if task == "" {
				return nil, fmt.Errorf("task is required: what the workflow should do")
			}
			ref, err := h.referenceText(ctx, "")
			if err != nil {
				return nil, err
			}
			text := "Write a keep workflow that " + task + ".\n\n" +
				"Use only what this reference offers; reads in producers and prepare, at most one mutation in mutate. " +
				"Check the file with the validate tool, dry-run it with try, and hand it to the person with propose " +
				"(you cannot deploy it; they accept it in keep).\n\n" + ref
			return &sdk.GetPromptResult{Description: "write a workflow",
				Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "explain-wait", Title: "Explain why a workflow waits",
		Description: "Explain, from keep's own state, why a workflow is waiting and what the person can do.",
		Arguments:   []*sdk.PromptArgument{{Name: "workflow", Description: "the workflow's name", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			name := strings.TrimSpace(req.Params.Arguments["workflow"])
			if name == "" {
				return nil, fmt.Errorf("workflow is required")
			}
			d, err := h.o.API.Workflow(ctx, name)
			if err != nil {
				return nil, err
			}
			att, err := h.o.API.Attention(ctx)
			if err != nil {
				return nil, err
			}
			// Titles, reasons and errors are made of what the workflow read
			// (a mail's subject, a feed item, a page): said as this prompt's
			// own words they would speak to the assistant as the person.
			// They are quoted as data, as every model of keep is given them.
			var b strings.Builder
			fmt.Fprintf(&b, "Explain to the person why the keep workflow %q waits, and what they can do about it (in keep: approve, answer, retry, sign in), in a few sentences.\n\n", name)
			b.WriteString(model.DataRule + "\n\n")
			fmt.Fprintf(&b, "State: %s, status %s, version %d, schedule %s, %d pending inputs.\n", d.State, d.Status, d.Version, d.Schedule, d.PendingInputs)
			if d.Block != nil {
				fmt.Fprintf(&b, "Blocked (%s):\n%s\n", d.Block.Kind, model.Untrusted("reason", d.Block.Reason))
			}
			if d.LoadError != "" {
				fmt.Fprintf(&b, "Its file no longer loads:\n%s\n", model.Untrusted("error", d.LoadError))
			}
			if !h.o.engineRuns() {
				fmt.Fprintf(&b, "%s\n", MCPServeWhere(h.o))
			}
			n := 0
			for _, a := range att {
				if a.Workflow != name {
					continue
				}
				n++
				fmt.Fprintf(&b, "Waiting for the person (%s)", a.Kind)
				if a.Command != "" {
					fmt.Fprintf(&b, " (fix: %s)", a.Command)
				}
				fmt.Fprintf(&b, ":\n%s\n%s\n", model.Untrusted("title", a.Title), model.Untrusted("reason", a.Reason))
			}
			if n == 0 {
				b.WriteString("Nothing of it waits in Attention.\n")
			}
			return &sdk.GetPromptResult{Description: "why " + name + " waits",
				Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: b.String()}}}}, nil
		})
}

// MCPHTTPHandler serves keep mcp serve over streamable HTTP, the same
// server as on stdio, to requests that carry token as their bearer
// credential; every other request is refused with 401 before it reaches
// the server. token must not be empty.
func MCPHTTPHandler(o MCPServeOpts, token string) http.Handler {
	if token == "" {
		panic("authoring: mcp serve over HTTP without a token")
	}
	srv := NewMCPServer(o)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: MCPHTTPIdle})
	want := []byte("Bearer " + token)
	var room sessionRoom
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="keep"`)
			http.Error(w, "keep mcp serve: this needs the token of keep's mcp serve account (Authorization: Bearer …)", http.StatusUnauthorized)
			return
		}
		// A session lives until its client says DELETE, which many never
		// do, or it idles for MCPHTTPIdle; each holds memory, so a client
		// that opens them without end would grow the server without end.
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			// The SDK makes the session only inside h.ServeHTTP, so one
			// counted and not yet made is held as opening: initializes
			// arriving at once each saw room, and all were kept.
			n, ok := room.take(srv)
			if !ok {
				http.Error(w, fmt.Sprintf("keep mcp serve: %d sessions are open, the most it keeps; end one (DELETE with its Mcp-Session-Id), or wait until one has been idle for %s",
					n, MCPHTTPIdle), http.StatusServiceUnavailable)
				return
			}
			defer room.done()
		}
		h.ServeHTTP(w, r)
	})
}

// sessionRoom bounds the sessions of a server, counting those being opened.
type sessionRoom struct {
	mu      sync.Mutex
	opening int
}

// take says how many sessions are open or opening, and whether one more
// may open; if so it is counted as opening until done.
func (s *sessionRoom) take(srv *sdk.Server) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.opening
	for range srv.Sessions() {
		n++
	}
	if n >= MCPHTTPSessions {
		return n, false
	}
	s.opening++
	return n, true
}

func (s *sessionRoom) done() {
	s.mu.Lock()
	s.opening--
	s.mu.Unlock()
}

// MCPHTTPSessions bounds the sessions keep mcp serve --http keeps open at
// once; MCPHTTPIdle ends one no request has used for that long.
const (
	MCPHTTPSessions = 64
	MCPHTTPIdle     = 30 * time.Minute
)

// CheckServeAddr refuses an address keep mcp serve --http would listen on
// beyond this machine, unless public says the person means it.
func CheckServeAddr(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w (give HOST:PORT, e.g. 127.0.0.1:8765)", addr, err)
	}
	if public {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s listens beyond this machine: give a loopback address (127.0.0.1:PORT), or add --public if you mean it", addr)
}

// MinServeToken is the shortest token keep mcp serve --http serves behind:
// nothing bounds how often a client may guess, so the token's length is
// all that keeps out whatever reaches the port.
const MinServeToken = 16

// CheckServeToken refuses a token too short to serve behind.
func CheckServeToken(token string) error {
	if n := len(token); n < MinServeToken {
		return fmt.Errorf("the token is %d characters long; one under %d can be guessed by whatever reaches the port: "+
			"sign in to the token account again (keep auth login NAME) with a long random one, e.g. from openssl rand -hex 32", n, MinServeToken)
	}
	return nil
}

// ServeMCPHTTP runs MCPHTTPHandler on addr until ctx ends.
func ServeMCPHTTP(ctx context.Context, o MCPServeOpts, addr, token string) error {
	if err := CheckServeToken(token); err != nil {
		return fmt.Errorf("keep mcp serve --http: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: MCPHTTPHandler(o, token), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
