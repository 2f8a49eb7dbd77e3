// Package model is the model's side of writing workflows: the
// chat-completions client keep new and keep edit draft with, the repairers
// a logic failure is handed to (DESIGN.md §7.2), and the quoting that keeps
// what a workflow read as data in every prompt. It knows nothing of the
// engine: engine/authoring hands a repairer a RepairRequest and takes back
// only a script, which becomes a proposal for the person.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"keep/connectors"
	"keep/engine/config"
)

// ErrNoLLM says the config has no [llm] endpoint; its text says what to add.
var ErrNoLLM = errors.New(`no LLM is configured; add to your config file:

[llm]
endpoint = "https://api.openai.com/v1"   # any OpenAI-compatible base URL, or its /chat/completions URL
model = "gpt-4o-mini"
api_key_env = "KEEP_LLM_API_KEY"         # the environment variable that holds the key`)

// ChatMessage is one message of a chat-completions conversation.
type ChatMessage struct {
	Role    string `json:"role"` // system, user, assistant
	Content string `json:"content"`
}

// Chat is an OpenAI-compatible chat-completions client.
type Chat struct {
	URL    string // the chat-completions URL
	Model  string
	APIKey string
	Client *http.Client
}

// ChatFrom builds the client of [llm], or ErrNoLLM.
func ChatFrom(l config.LLM) (*Chat, error) {
	if strings.TrimSpace(l.Endpoint) == "" {
		return nil, ErrNoLLM
	}
	c := &Chat{URL: ChatURL(l.Endpoint), Model: l.Model}
	if l.APIKeyEnv != "" {
		c.APIKey = os.Getenv(l.APIKeyEnv)
	}
	return c, nil
}

// ChatURL turns a base URL ("https://host/v1", "http://localhost:8080")
// into its chat-completions URL; a URL that already is one is kept.
func ChatURL(endpoint string) string {
	u := strings.TrimRight(strings.TrimSpace(endpoint), "/")
	switch {
	case strings.HasSuffix(u, "/chat/completions"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/chat/completions"
	}
	return u + "/v1/chat/completions"
}

// RepairerFrom is the repairer of DESIGN.md §7.2, only when [repair]
// enabled is set: [repair]'s command or endpoint, else [llm]'s endpoint.
// The [repair] endpoint's key comes from $KEEP_REPAIR_API_KEY, [llm]'s from
// its api_key_env. Whatever it answers is only a proposal (proposal.go).
func RepairerFrom(r config.Repair, l config.LLM) Repairer {
	switch {
	case !r.Enabled:
		return nil
	case r.Command != "":
		return CommandRepairer{Command: r.Command}
	case r.Endpoint != "":
		return EndpointRepairer{URL: r.Endpoint, Model: r.Model, APIKey: os.Getenv("KEEP_REPAIR_API_KEY")}
	}
	if c, err := ChatFrom(l); err == nil {
		return EndpointRepairer{URL: c.URL, Model: c.Model, APIKey: c.APIKey}
	}
	return nil
}

// Complete sends the conversation and returns the model's answer.
func (c *Chat) Complete(ctx context.Context, msgs []ChatMessage) (string, error) {
	body, err := json.Marshal(map[string]any{"model": c.Model, "messages": msgs})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("llm: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	// the key goes through connectors' one credential transport: to the
	// endpoint's origin only, never over plain http to another machine
	t := connectors.Transport{Client: client}
	if c.APIKey != "" {
		t.Account = connectors.KeyAccount{Label: "llm", Value: c.APIKey}
	}
	// named as connectors name a URL: a password or key written into the
	// endpoint stays out of errors, and so out of the log a failed repair
	// writes to
	shown := connectors.RedactURLText(c.URL)
	resp, _, err := t.Do(req)
	if err != nil {
		return "", fmt.Errorf("llm %s: %w", shown, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return "", fmt.Errorf("llm %s: %w", shown, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("llm %s answered %s: %s", shown, resp.Status, Clip(string(raw), 300))
	}
	// what was read of a longer answer may parse by itself, yet is not
	// what the model answered
	if len(raw) > maxAnswer {
		return "", fmt.Errorf("llm %s: its answer is over 4 MiB; keep reads no more", shown)
	}
	var out struct {
		Choices []struct {
			Message      ChatMessage `json:"message"`
			FinishReason string      `json:"finish_reason"`
		} `json:"choices"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		if out.Error != nil && out.Error.Message != "" {
			return "", fmt.Errorf("llm %s answered an error: %s", shown, Clip(out.Error.Message, 300))
		}
		return "", fmt.Errorf("llm %s: no choices in its answer", shown)
	}
	if out.Choices[0].FinishReason == "length" {
		// the model stopped mid-answer: a file cut short is not a draft
		return "", fmt.Errorf("llm %s: the answer was cut at the model's length limit (finish_reason length); "+
			"a model or server with a larger output limit is needed", shown)
	}
	return out.Choices[0].Message.Content, nil
}

// maxAnswer is the most of a model's answer keep reads.
const maxAnswer = 4 << 20

// Clip cuts s to n bytes for an error message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
