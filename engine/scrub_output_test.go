package engine

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/engine/config"
)

// TestScriptOutputIsScrubbedLikeAnswers: a server echoes a held secret in
// two halves (each too short, and too partial, to be caught in the
// answer), the script puts them together and logs the secret, reversed,
// base64 (standard and URL), URL-encoded and hex, then throws with it: the
// trace and the run's error keep none of them.
func TestScriptOutputIsScrubbedLikeAnswers(t *testing.T) {
	t.Parallel()
	const secret = "Zq9/+Wx?k~mail-very-secret"
	half := len(secret) / 2
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"a": secret[:half], "b": secret[half:]})
	}))
	defer echo.Close()
	b := setup(t, allowMutations, func(c *config.Config) {
		c.Connectors.Mail.Password = secret
		c.Connectors.Mail.Username = "me@example.com"
	})
	b.deploy("echo", `export default Keep.workflow({ name: "echo", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.http.get({ url: "`+echo.URL+`/" });
    const s = r.json.a + r.json.b;
    const b64 = (str) => {
      const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      let out = "";
      for (let i = 0; i < str.length; i += 3) {
        const n = (str.charCodeAt(i) << 16) | ((str.charCodeAt(i + 1) || 0) << 8) | (str.charCodeAt(i + 2) || 0);
        out += A[(n >> 18) & 63] + A[(n >> 12) & 63] + (i + 1 < str.length ? A[(n >> 6) & 63] : "=") + (i + 2 < str.length ? A[n & 63] : "=");
      }
      return out;
    };
    console.log("clear " + s);
    console.log("reversed " + s.split("").reverse().join(""));
    console.log("base64 " + b64(s));
    console.log("base64url " + b64(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
    console.log("uri " + encodeURIComponent(s));
    console.log("hex " + Array.from(s).map(c => c.charCodeAt(0).toString(16).padStart(2, "0")).join(""));
    console.warn("hex upper " + Array.from(s).map(c => c.charCodeAt(0).toString(16).padStart(2, "0")).join("").toUpperCase());
    throw new Error("gave up on " + s.split("").reverse().join(""));
  } } } });`)
	b.drain()
	ctx := context.Background()
	runs, err := b.e.Runs(ctx, "echo", api.Page{Limit: 10})
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	lines, err := b.e.Trace(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		text.Write(j)
		text.WriteByte('\n')
	}
	for _, r := range runs {
		text.WriteString(r.Error + "\n")
	}
	rev := []byte(secret)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	forms := map[string]string{
		"clear": secret, "reversed": string(rev), "base64": base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64url": base64.RawURLEncoding.EncodeToString([]byte(secret)), "uri": url.QueryEscape(secret),
		"encodeURIComponent": strings.ReplaceAll(url.QueryEscape(secret), "+", "%20"), "hex": hex.EncodeToString([]byte(secret)),
		"HEX": strings.ToUpper(hex.EncodeToString([]byte(secret))),
	}
	got := text.String()
	if !strings.Contains(got, "hex upper [redacted]") || !strings.Contains(got, "gave up on [redacted]") {
		t.Fatalf("the script's lines are not all there, scrubbed:\n%s", got)
	}
	for name, f := range forms {
		if strings.Contains(got, f) {
			t.Errorf("the %s form of the secret (%s) is in the trace or a run's error:\n%s", name, f, got)
		}
	}
	for _, want := range []string{"clear [redacted]", "reversed [redacted]", "base64 [redacted]", "base64url [redacted]", "uri [redacted]", "hex [redacted]"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q line in:\n%s", want, got)
		}
	}
}
