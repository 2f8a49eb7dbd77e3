package model

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// chatServer is an OpenAI-compatible chat-completions endpoint that
// answers every request with status and body.
func chatServer(t *testing.T, status int, body func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, "not a chat completion", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		body(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func answer(s string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.Write([]byte(s)) }
}

func ask(c *Chat) (string, error) {
	return c.Complete(context.Background(), []ChatMessage{{Role: "user", Content: "write a workflow"}})
}

// An endpoint written with a password or a key in it (a proxy's
// https://user:pw@host/, ?key=…) is named in errors, which reach the log
// through a failed repair, as connectors name a URL: without them.
func TestChatErrorsNameTheEndpointWithoutItsSecrets(t *testing.T) {
	srv := chatServer(t, http.StatusInternalServerError, answer("overloaded"))
	withSecrets := strings.Replace(srv.URL, "http://", "http://me:pw-in-url@", 1) + "/v1/chat/completions?key=key-in-url"
	for name, url := range map[string]string{
		"an error answer": withSecrets,
		"no answer":       "http://me:pw-in-url@127.0.0.1:1/v1/chat/completions?key=key-in-url",
	} {
		_, err := ask(&Chat{URL: url, Model: "m", APIKey: "sk-the-key"})
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, secret := range []string{"pw-in-url", "key-in-url", "sk-the-key"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the error holds %q: %v", name, secret, err)
			}
		}
		if !strings.Contains(err.Error(), "/v1/chat/completions") {
			t.Errorf("%s: the error does not say which endpoint: %v", name, err)
		}
	}
}

// keep reads at most 4 MiB of an answer; what is past that was never
// read, so the part that was is not the model's answer, even when it
// parses by itself.
func TestChatRefusesAnAnswerOverItsCap(t *testing.T) {
	srv := chatServer(t, http.StatusOK, func(w http.ResponseWriter) {
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"the first part"}}]}`))
		w.Write([]byte(strings.Repeat(" ", 4<<20)))
		w.Write([]byte(`,"and the rest, which does not parse"`))
	})
	got, err := ask(&Chat{URL: srv.URL + "/v1/chat/completions", Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "over 4 MiB") {
		t.Fatalf("an answer over the cap gave %q, %v; want it refused as too large", got, err)
	}
}

// A server that answers 200 with an OpenAI error object (a proxy, a
// quota) says why; "no choices" alone left the person guessing.
func TestChatSaysTheErrorOfA200(t *testing.T) {
	srv := chatServer(t, http.StatusOK, answer(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}`))
	_, err := ask(&Chat{URL: srv.URL + "/v1/chat/completions", Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "You exceeded your current quota") {
		t.Fatalf("a 200 with an error body: %v; want its message", err)
	}
}

// An answer the model stopped at its length limit is not the file it was
// writing: it is refused saying so, not handed on as whole.
func TestChatRefusesAnAnswerCutAtTheModelsLimit(t *testing.T) {
	srv := chatServer(t, http.StatusOK, answer(`{"choices":[{"index":0,"finish_reason":"length",`+
		`"message":{"role":"assistant","content":"export default Keep.workflow({ name: \"x\", topics: {"}}]}`))
	got, err := ask(&Chat{URL: srv.URL + "/v1/chat/completions", Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "length limit") {
		t.Fatalf("an answer cut at the model's limit gave %q, %v; want it refused", got, err)
	}
}

// The wire format the client speaks, for the tests above to stand on.
func TestChatTakesTheFirstChoice(t *testing.T) {
	srv := chatServer(t, http.StatusOK, answer(`{"id":"c1","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",`+
		`"message":{"role":"assistant","content":"hello"}}]}`))
	got, err := ask(&Chat{URL: srv.URL + "/v1/chat/completions", Model: "m"})
	if err != nil || got != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
}
