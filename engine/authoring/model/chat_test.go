package model

import (
	"errors"
	"testing"

	"keep/engine/config"
)

func TestChatURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1":              "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1/":             "https://api.openai.com/v1/chat/completions",
		"http://localhost:11434":                 "http://localhost:11434/v1/chat/completions",
		"http://host/openai/v1/chat/completions": "http://host/openai/v1/chat/completions",
		" http://host/api/v1/chat/completions/ ": "http://host/api/v1/chat/completions",
	} {
		if got := ChatURL(in); got != want {
			t.Errorf("ChatURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRepairerFallsBackToLLM: repair is its own opt-in ([repair] enabled);
// then [repair] wins; without it [llm] repairs, with its key from
// api_key_env; with neither there is no repairer.
func TestRepairerFallsBackToLLM(t *testing.T) {
	t.Setenv("KEEP_TEST_KEY", "sk-1")
	llm := config.LLM{Endpoint: "http://127.0.0.1:9/v1", Model: "m", APIKeyEnv: "KEEP_TEST_KEY"}
	if got := RepairerFrom(config.Repair{}, llm); got != nil {
		t.Fatalf("[llm] alone (for keep new) turned repair on: %#v", got)
	}
	if got := RepairerFrom(config.Repair{Command: "cat"}, llm); got != nil {
		t.Fatalf("[repair] without enabled = true turned repair on: %#v", got)
	}
	r, ok := RepairerFrom(config.Repair{Enabled: true}, llm).(EndpointRepairer)
	if !ok || r.URL != "http://127.0.0.1:9/v1/chat/completions" || r.Model != "m" || r.APIKey != "sk-1" {
		t.Fatalf("repairer from [llm] = %#v", r)
	}
	if _, ok := RepairerFrom(config.Repair{Enabled: true, Command: "cat"}, llm).(CommandRepairer); !ok {
		t.Error("[repair] command did not win over [llm]")
	}
	if got := RepairerFrom(config.Repair{Enabled: true}, config.LLM{APIKeyEnv: "X"}); got != nil {
		t.Errorf("a repairer without any endpoint: %#v", got)
	}
	if _, err := ChatFrom(config.LLM{}); !errors.Is(err, ErrNoLLM) {
		t.Errorf("ChatFrom without an endpoint: %v", err)
	}
}
