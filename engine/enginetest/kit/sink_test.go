package kit

import (
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, key, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0 // a dropped connection
	}
	resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSink(t *testing.T) {
	s := NewSink(t)
	s.Set("abort-after-apply", 1)
	if code := post(t, s.URL+"/hook", "k1", `{"id":"a"}`); code != 0 {
		t.Fatalf("an aborted POST answered %d", code)
	}
	if get(t, s.URL+"/items/a", "") != 200 || get(t, s.URL+"/hook", "k1") != 200 || get(t, s.URL+"/hook", "k2") != 404 {
		t.Fatal("reconcile does not see what arrived, by item and by key")
	}
	if code := post(t, s.URL+"/hook", "k2", `{"id":"b"}`); code != 200 {
		t.Fatalf("after one failure the sink answered %d, want ok", code)
	}
	if s.Posts() != 2 || s.MaxPerKey() != 1 || s.Gets() != 3 {
		t.Fatalf("posts %d, max per key %d, gets %d", s.Posts(), s.MaxPerKey(), s.Gets())
	}
	s.Posted(t, "a", "b")

	post(t, s.URL+"/hook", "", `{"id":"c"}`)
	f := &fakeTB{}
	s.Posted(f, "a", "b", "c")
	if !f.failed {
		t.Fatal("a POST without an Idempotency-Key passed Posted")
	}
}
