package authoring_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/authoring/model"
	"keep/engine/enginetest"
)

// A model that stops answering after its first draft (a rate limit, the
// server gone) leaves the person that draft, marked as not working, as
// the last round would: it used to be dropped with the error, the
// model's work and the problems found in it lost.
func TestADraftOutlivesTheModelsLaterFailure(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	first := strings.Replace(stateWorkflow, `const { content } = await ctx.files.read({ path: "private/diary.txt" });`,
		`throw new Error("not written yet");`, 1)
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if asked.Add(1) > 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "```javascript\n" + first + "```\n"}}}})
	}))
	t.Cleanup(srv.Close)
	chat := &model.Chat{URL: srv.URL + "/v1/chat/completions", Model: "m"}
	d, err := authoring.DraftWorkflow(context.Background(), chat, h.E.Registry(), h.E.Policy(), authoring.DraftRequest{
		Description: "keep a diary", FileName: "draft.js", Try: api.TryOptions{CaptureReads: true}})
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v, want the model's 429", err)
	}
	if d == nil || !d.Invalid || d.Source != first || d.Rounds != 1 || !strings.Contains(d.Problems, "not written yet") {
		t.Fatalf("draft = %+v, want the first draft, invalid, with its problems", d)
	}
}
