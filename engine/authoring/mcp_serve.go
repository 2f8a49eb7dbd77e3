package authoring

// keep mcp serve offers keep to a person's own assistant (Claude, Cursor,
// any MCP client) as an MCP server over stdio (DESIGN.md §15): the
// scripting reference, validate, try and propose, and read-only views of
// workflows, inputs, runs and attention. No tool approves, answers, grants
// or deploys: a proposal waits in the TUI's Attention for the person.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/reference"
	"keep/sandbox"
)

// MCPServeAPI is all of keep the server reaches: read-only views and
// Propose. Nothing in it approves, answers, grants or deploys, so no tool
// can. api.API is one.
type MCPServeAPI interface {
	Info() api.Info
	Workflows(ctx context.Context) ([]api.WorkflowView, error)
	Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error)
	Inputs(ctx context.Context, workflow string, page api.Page) ([]api.InputView, error)
	Runs(ctx context.Context, workflow string, page api.Page) ([]api.RunView, error)
	Attention(ctx context.Context) ([]api.AttentionItem, error)
	Propose(ctx context.Context, p api.ProposalRequest) (*api.ProposalView, error)
}

// MCPServeOpts are what the server serves from.
type MCPServeOpts struct {
	// API is the engine: the daemon's client, one in-process, or (keep mcp
	// serve) whichever of the two each call finds.
	API MCPServeAPI
	// Registry and Policy are the config's connectors and policy, for the
	// reference, validate and try.
	Registry *connectors.Registry
	Policy   engine.Policy
	// Version is keep's, told to the client.
	Version string
	// DB is the database served; EngineRuns says whether an engine (the
	// daemon's or the TUI's) runs it, or API is one of this process's that
	// runs nothing (mcp_serve_extra.go). Running, if set, says it instead,
	// at each asking: an engine may start, or stop, while the server runs.
	DB         string
	EngineRuns bool
	Running    func() bool
}

func (o MCPServeOpts) engineRuns() bool {
	if o.Running != nil {
		return o.Running()
	}
	return o.EngineRuns
}

// NewMCPServer builds the server and its tools.
func NewMCPServer(o MCPServeOpts) *sdk.Server {
	if o.API == nil || o.Registry == nil {
		panic("authoring: mcp serve: API and Registry are required")
	}
	v := o.Version
	if v == "" {
		v = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "keep", Version: v}, &sdk.ServerOptions{
		Instructions: "keep runs the person's durable automations (workflows in JavaScript). Read `reference` before writing one; " +
			"check it with `validate` and `try`; hand it to the person with `propose`. You cannot deploy, approve or grant: the person does that in keep.",
	})
	h := mcpHandlers{o: o, dry: make(chan struct{}, 1)}
	for _, t := range h.tools() {
		s.AddTool(t.tool, t.fn)
	}
	h.addResources(s)
	h.addPrompts(s)
	return s
}

// ServeMCP runs the server on stdin/stdout until the client goes away or ctx
// ends.
func ServeMCP(ctx context.Context, o MCPServeOpts) error {
	return NewMCPServer(o).Run(ctx, &sdk.StdioTransport{})
}

type mcpHandlers struct {
	o MCPServeOpts
	// dry holds the one dry run (try, propose) the server makes at a time.
	// A client's calls arrive at once: forty tries of a file that runs
	// until DryRunTime were forty engines on forty databases, and a
	// proposal's dry run is the running engine's (the daemon's) to make.
	dry chan struct{}
}

// oneDryRun runs fn when no other dry run of this server is going,
// waiting for it (or for the client to give up) until then.
func (h mcpHandlers) oneDryRun(ctx context.Context, fn func() (any, error)) (*sdk.CallToolResult, error) {
	select {
	case h.dry <- struct{}{}:
	case <-ctx.Done():
		return mcpResult(nil, ctx.Err())
	}
	defer func() { <-h.dry }()
	return mcpResult(fn())
}

type mcpToolDef struct {
	tool *sdk.Tool
	fn   sdk.ToolHandler
}

// MCPServeTools are the names NewMCPServer offers, for tests and the README.
var MCPServeTools = []string{"reference", "validate", "try", "propose", "workflows", "status", "inputs", "runs", "attention"}

func mcpObj(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

func mcpStr(doc string) map[string]any { return map[string]any{"type": "string", "description": doc} }
func mcpNum(doc string) map[string]any { return map[string]any{"type": "integer", "description": doc} }

var mcpWorkflowArg = map[string]any{"workflow": mcpStr("the workflow's name")}

func (h mcpHandlers) tools() []mcpToolDef {
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	file := map[string]any{"file_name": mcpStr("a name ending .js or .ts"), "source": mcpStr("the whole workflow file")}
	withLimit := map[string]any{"workflow": mcpStr("the workflow's name"), "limit": mcpNum("how many, newest first (default 50)")}
	return []mcpToolDef{
		{&sdk.Tool{Name: "reference", Annotations: ro, Description: "keep's scripting reference: phases, ctx operations, every connector method with its types (MCP servers' tools included). Read it before writing a workflow.",
			InputSchema: mcpObj(map[string]any{"connector": mcpStr("only this connector (e.g. files, http, mcp)")})}, h.reference},
		{&sdk.Tool{Name: "validate", Annotations: ro, Description: "Static checks of a workflow file (declarations, topics, schedules, connector methods). Returns the problems as file:line:col: message.",
			InputSchema: mcpObj(file, "file_name", "source")}, h.validate},
		{&sdk.Tool{Name: "try", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}, Description: "A dry run of a workflow file on a throw-away database: reads and mutations are captured and shown, none is made.",
			InputSchema: mcpObj(map[string]any{"file_name": file["file_name"], "source": file["source"], "producer": mcpStr("run only this producer"), "limit": mcpNum("stop after this many runs")}, "file_name", "source")}, h.try},
		{&sdk.Tool{Name: "propose", Description: "Propose a new workflow or a new version of one to the person: it waits in keep's Attention with its diff, summary and dry run, and is deployed only if they accept.",
			InputSchema: mcpObj(map[string]any{"workflow": mcpStr("the workflow it replaces, if any"), "file_name": file["file_name"], "source": file["source"], "reason": mcpStr("why, in a sentence the person will read")}, "file_name", "source", "reason")}, h.propose},
		{&sdk.Tool{Name: "workflows", Annotations: ro, Description: "Every workflow with its state, schedule, pending inputs and attention count.", InputSchema: mcpObj(nil)}, h.workflows},
		{&sdk.Tool{Name: "status", Annotations: ro, Description: "One workflow in detail; without a workflow, which database keep serves and whether an engine runs it.", InputSchema: mcpObj(mcpWorkflowArg)}, h.status},
		{&sdk.Tool{Name: "inputs", Annotations: ro, Description: "A workflow's inputs and the outputs (mutations) each caused.", InputSchema: mcpObj(withLimit, "workflow")}, h.inputs},
		{&sdk.Tool{Name: "runs", Annotations: ro, Description: "A workflow's run records: handler, phase, status, error.", InputSchema: mcpObj(withLimit, "workflow")}, h.runs},
		{&sdk.Tool{Name: "attention", Annotations: ro, Description: "Everything waiting for the person (approvals, reconciliations, failed runs, proposals). You can explain them; only the person answers them.", InputSchema: mcpObj(nil)}, h.attention},
	}
}

// args decodes a call's arguments into v.
func mcpArgs(req *sdk.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params.Arguments, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// result is v as JSON text (and structured content), or a tool error the
// assistant can read and act on.
func mcpResult(v any, err error) (*sdk.CallToolResult, error) {
	if err != nil {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
	}
	if s, ok := v.(string); ok {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}, nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
}

type mcpFileArgs struct {
	Workflow string `json:"workflow"`
	FileName string `json:"file_name"`
	Source   string `json:"source"`
	Producer string `json:"producer"`
	Limit    int    `json:"limit"`
	Reason   string `json:"reason"`
}

func (a mcpFileArgs) check() error {
	switch {
	case a.FileName == "" || a.Source == "":
		return errors.New("file_name and source are required")
	case !strings.HasSuffix(a.FileName, ".js") && !strings.HasSuffix(a.FileName, ".ts"):
		return fmt.Errorf("file_name %q must end .js or .ts", a.FileName)
	}
	return nil
}

func (h mcpHandlers) reference(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a struct {
		Connector string `json:"connector"`
	}
	if err := mcpArgs(req, &a); err != nil {
		return mcpResult(nil, err)
	}
	if help := engine.MCPHelp(h.o.Registry, a.Connector); help != "" {
		return mcpResult(help, nil)
	}
	return mcpResult(h.referenceText(ctx, a.Connector))
}

// validation is validate's answer.
type mcpValidation struct {
	OK           bool     `json:"ok"`
	Workflow     string   `json:"workflow,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	Problems     []string `json:"problems,omitempty"`
}

// loadOptions are keep validate's, with the tools of the MCP servers src
// names listed first.
func (h mcpHandlers) loadOptions(ctx context.Context, src []byte) sandbox.LoadOptions {
	engine.AwaitMCPTools(ctx, h.o.Registry, src)
	return reference.LoadOptions(h.o.Registry, h.o.Policy.MinProducerInterval)
}

func (h mcpHandlers) validate(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a mcpFileArgs
	if err := mcpArgs(req, &a); err != nil {
		return mcpResult(nil, err)
	}
	if err := a.check(); err != nil {
		return mcpResult(nil, err)
	}
	sc, err := sandbox.Load(a.FileName, []byte(a.Source), h.loadOptions(ctx, []byte(a.Source)))
	if err != nil {
		var ve *sandbox.ValidationError
		if errors.As(err, &ve) {
			v := mcpValidation{}
			for _, d := range ve.Diagnostics {
				v.Problems = append(v.Problems, d.String())
			}
			return mcpResult(v, nil)
		}
		return mcpResult(nil, err)
	}
	return mcpResult(mcpValidation{OK: true, Workflow: sc.Workflow.Name, Capabilities: sc.Capabilities}, nil)
}

func (h mcpHandlers) try(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a mcpFileArgs
	if err := mcpArgs(req, &a); err != nil {
		return mcpResult(nil, err)
	}
	if err := a.check(); err != nil {
		return mcpResult(nil, err)
	}
	return h.oneDryRun(ctx, func() (any, error) {
		return Try(ctx, h.o.Registry, h.o.Policy, a.FileName, []byte(a.Source), api.TryOptions{Producer: a.Producer, Limit: a.Limit, CaptureReads: true})
	})
}

func (h mcpHandlers) propose(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a mcpFileArgs
	if err := mcpArgs(req, &a); err != nil {
		return mcpResult(nil, err)
	}
	if err := a.check(); err != nil {
		return mcpResult(nil, err)
	}
	// API.Propose files it in Attention: nothing an assistant sends is
	// deployed before the person accepts it
	return h.oneDryRun(ctx, func() (any, error) {
		v, err := h.o.API.Propose(ctx, api.ProposalRequest{Workflow: a.Workflow, FileName: a.FileName,
			Source: []byte(a.Source), Origin: api.OriginMCP, Reason: a.Reason})
		if err != nil {
			return nil, err
		}
		return mcpProposalView(*v), nil
	})
}

// mcpProposalDryRunNote stands, in the model's copy of a proposal, for a
// dry run it is not given.
const mcpProposalDryRunNote = "its dry run ran from the workflow's own state and events, which are the person's: they read it in keep; " +
	"the try tool dry-runs the file on an empty database"

// mcpProposalView is the proposal as told to the model. A new version's
// dry run starts from the deployed workflow's state and events, what it
// read for real (a diary's lines, a mail's body), which no view of this
// server shows: a version that throws its state, or titles its runs with
// its events, would hand them to the model in the answer.
func mcpProposalView(v api.ProposalView) api.ProposalView {
	if v.BaseVersion > 0 && (v.DryRun != nil || v.DryRunError != "") {
		v.DryRun, v.DryRunError = nil, mcpProposalDryRunNote
	}
	return v
}

func (h mcpHandlers) workflows(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	return h.withNote(mcpResult(h.o.API.Workflows(ctx)))
}

func (h mcpHandlers) attention(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	att, err := h.o.API.Attention(ctx)
	if err != nil {
		return mcpResult(nil, err)
	}
	// A proposal's preview holds its dry run, for the person: from the
	// workflow's own state and events when it replaces a version (see
	// mcpProposalView). Its summary stays, in params.
	for i := range att {
		if att[i].Kind == api.AttentionProposal {
			att[i].Preview = "the summary is in params; the diff and " + mcpProposalDryRunNote
		}
	}
	return mcpResult(att, nil)
}

type mcpListArgs struct {
	Workflow string `json:"workflow"`
	Limit    int    `json:"limit"`
}

func (h mcpHandlers) list(req *sdk.CallToolRequest) (mcpListArgs, error) {
	var a mcpListArgs
	if err := mcpArgs(req, &a); err != nil {
		return a, err
	}
	if a.Workflow == "" {
		return a, errors.New("workflow is required")
	}
	if a.Limit <= 0 || a.Limit > 500 {
		a.Limit = 50
	}
	return a, nil
}

func (h mcpHandlers) status(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var a mcpListArgs
	if err := mcpArgs(req, &a); err != nil {
		return mcpResult(nil, err)
	}
	if a.Workflow == "" {
		// one look, so the flag and the note agree
		runs := h.o.engineRuns()
		o := h.o
		o.Running = func() bool { return runs }
		return mcpResult(mcpServeStatus{DB: h.o.DB, EngineRuns: runs, Note: MCPServeWhere(o)}, nil)
	}
	return h.withNote(mcpResult(h.o.API.Workflow(ctx, a.Workflow)))
}

func (h mcpHandlers) inputs(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	a, err := h.list(req)
	if err != nil {
		return mcpResult(nil, err)
	}
	return mcpResult(h.o.API.Inputs(ctx, a.Workflow, api.Page{Limit: a.Limit}))
}

func (h mcpHandlers) runs(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	a, err := h.list(req)
	if err != nil {
		return mcpResult(nil, err)
	}
	return mcpResult(h.o.API.Runs(ctx, a.Workflow, api.Page{Limit: a.Limit}))
}
