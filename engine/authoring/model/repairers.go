package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
)

// Repairer turns a logic failure into a new script (DESIGN.md §7.2).
type Repairer interface {
	Repair(ctx context.Context, req RepairRequest) (newSource string, err error)
}

// RepairRequest is what a repairer is given.
type RepairRequest struct {
	Workflow string   `json:"workflow"`
	FileName string   `json:"file_name"`
	Script   string   `json:"script"`
	Error    string   `json:"error"`
	Handler  string   `json:"handler"`
	Phase    string   `json:"phase"`
	Trace    []string `json:"trace"`
}

// CommandRepairer runs a command (through sh -c) with the RepairRequest as
// JSON on stdin; what it writes on stdout is the new script.
type CommandRepairer struct{ Command string }

func (r CommandRepairer) Repair(ctx context.Context, req RepairRequest) (string, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", r.Command)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("repair command: %w: %s", err, Clip(strings.TrimSpace(errOut.String()), 300))
	}
	if strings.TrimSpace(out.String()) == "" {
		return "", errors.New("repair command wrote no script")
	}
	return out.String(), nil
}

// EndpointRepairer asks a chat-completions endpoint for the new script.
type EndpointRepairer struct {
	URL    string
	Model  string
	APIKey string
	Client *http.Client
}

const repairPrompt = `You repair keep workflow scripts (JavaScript, export default Keep.workflow({...})). ` +
	`You get the script, the error, the failing handler and phase, and the end of its trace. ` +
	`Answer with the complete corrected script only, no explanation. Keep its name, topics and handlers; ` +
	`do not add calls to connectors the script did not use, hosts, handlers or topics, and do not make a schedule faster.\n\n` + DataRule

func (r EndpointRepairer) Repair(ctx context.Context, req RepairRequest) (string, error) {
	chat := &Chat{URL: r.URL, Model: r.Model, APIKey: r.APIKey, Client: r.Client}
	answer, err := chat.Complete(ctx, []ChatMessage{{Role: "system", Content: repairPrompt}, {Role: "user", Content: repairMessage(req)}})
	if err != nil {
		return "", fmt.Errorf("repair: %w", err)
	}
	return stripFence(answer), nil
}

// stripFence removes a Markdown code fence around a model's answer.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSpace(s), "```")
}
