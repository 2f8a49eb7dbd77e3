package connectors_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"keep/connectors"
)

func TestHeldScrub(t *testing.T) {
	t.Parallel()
	h := connectors.NewHeld()
	h.Add(connectors.HeldSecret{User: "me", Secret: "s3cret/with+chars"})
	var token string
	h.AddSource(func() []connectors.HeldSecret { return []connectors.HeldSecret{{Secret: token}} })
	token = "tok-one"

	t.Run("every encoding of a secret in a result is redacted, the rest kept", func(t *testing.T) {
		basic := base64.StdEncoding.EncodeToString([]byte("me:s3cret/with+chars"))
		in := map[string]any{"body": "x s3cret/with+chars y", "headers": map[string]any{"a": "Basic " + basic},
			"list": []any{"s3cret%2Fwith%2Bchars", int64(3)}, "tok-one": true, "plain": "ok"}
		out, err := h.Scrub(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(map[string]any)
		if got["body"] != "x [redacted] y" || got["headers"].(map[string]any)["a"] != "Basic [redacted]" ||
			got["list"].([]any)[0] != "[redacted]" || got["[redacted]"] != true || got["plain"] != "ok" {
			t.Errorf("scrubbed = %v", got)
		}
		if in["body"] != "x s3cret/with+chars y" {
			t.Error("the connector's own value was changed in place")
		}
	})

	t.Run("an error keeps its class and chain, not the secret", func(t *testing.T) {
		base := errors.New("echo tok-one")
		_, err := h.Scrub(nil, &connectors.Error{Class: connectors.Logic, NotSent: true, Err: base})
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Logic || !ce.NotSent || !errors.Is(err, base) {
			t.Fatalf("err = %#v, want its class, hints and cause kept", err)
		}
		if strings.Contains(err.Error(), "tok-one") || !strings.Contains(err.Error(), "echo [redacted]") {
			t.Errorf("err = %q", err)
		}
	})

	t.Run("a token replaced by a refresh is still held", func(t *testing.T) {
		token = "tok-two"
		if got := h.Redact("tok-one tok-two"); got != "[redacted] [redacted]" {
			t.Errorf("Redact = %q", got)
		}
	})
}
