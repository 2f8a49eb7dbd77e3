package clitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors/accounts/oauthtest"
	"keep/connectors/mcp/mcptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The canaries: one recognisable secret per kind keep holds.
const (
	canaryToken  = "SECRET-canary-token"        // an http account's bearer token
	canaryBasic  = "SECRET-canary-basic"        // an http account's password (Basic)
	canaryMCP    = "SECRET-canary-mcp"          // an MCP HTTP server's token
	canaryStdio  = "SECRET-canary-stdio"        // a stdio MCP server's env secret
	canaryMail   = "SECRET-canary-mailpw"       // the mail password, from KEEP_* env
	canarySlack  = "SECRET-canary-slack"        // the Slack token, from KEEP_* env
	canaryClient = "SECRET-canary-clientsecret" // an OAuth client secret
)

// canaries is every form of the held secrets a leak would show: each in
// clear and base64, the Basic password with its user, and the OAuth
// tokens the provider issued (read from credentials.json as they change).
type canaries struct {
	mu    sync.Mutex
	forms map[string]string // form → which secret
}

func (c *canaries) add(name, secret string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forms == nil {
		c.forms = map[string]string{}
	}
	b64 := base64.StdEncoding.EncodeToString
	c.forms[secret] = name
	c.forms[b64([]byte(secret))] = name + " (base64)"
	c.forms[b64([]byte("me:"+secret))] = name + " (Basic me:…)"
}

// addIssued adds the OAuth tokens credentials.json holds now.
func (c *canaries) addIssued(t *testing.T, creds string) {
	t.Helper()
	data, err := os.ReadFile(creds)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range strings.Split(string(data), `"`) {
		if strings.HasPrefix(f, "rt-") || strings.HasPrefix(f, "at-") {
			c.add("an issued OAuth token", f)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("credentials.json holds no OAuth token:\n%s", data)
	}
}

// scan reports every canary form in text, which came from where.
func (c *canaries) scan(t *testing.T, where string, text []byte) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for form, name := range c.forms {
		if i := bytes.Index(text, []byte(form)); i >= 0 {
			lo, hi := max(0, i-120), min(len(text), i+len(form)+60)
			t.Errorf("%s holds %s: …%q…", where, name, text[lo:hi])
		}
	}
}

// scanTree scans every file under dir but the credentials file (the one
// place secrets belong) and those in skip.
func (c *canaries) scanTree(t *testing.T, dir string, skip ...string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "credentials.json" {
			return nil
		}
		for _, s := range skip {
			if p == s {
				return nil
			}
		}
		if data, err := os.ReadFile(p); err == nil {
			n++
			c.scan(t, "file "+p, data)
		}
		return nil
	})
	if n == 0 {
		t.Fatalf("no file under %s to scan", dir)
	}
}

// descendants lists the processes under pid, children first.
func descendants(pid int) []int {
	var out []int
	for _, child := range childrenOf(pid) {
		out = append(out, child)
		out = append(out, descendants(child)...)
	}
	return out
}

// childrenOf lists the live processes whose parent is pid (from /proc:
// none where there is no /proc).
func childrenOf(pid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		child, _ := strconv.Atoi(filepath.Base(d))
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(pid) {
			continue
		}
		out = append(out, child)
	}
	return out
}

// echoIMAP is an IMAP server that refuses every login, quoting back what
// it was sent (LOGIN's arguments, AUTHENTICATE PLAIN's decoded blob).
func echoIMAP(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				fmt.Fprint(c, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n")
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					f := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 3)
					if len(f) < 2 {
						continue
					}
					tag, cmd := f[0], strings.ToUpper(f[1])
					switch cmd {
					case "CAPABILITY":
						fmt.Fprintf(c, "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n%s OK done\r\n", tag)
					case "AUTHENTICATE":
						blob := ""
						if args := strings.Fields(f[2]); len(args) > 1 {
							blob = args[1]
						} else {
							fmt.Fprint(c, "+ \r\n")
							l, _ := r.ReadString('\n')
							blob = strings.TrimSpace(l)
						}
						dec, _ := base64.StdEncoding.DecodeString(blob)
						fmt.Fprintf(c, "%s NO [AUTHENTICATIONFAILED] you sent %s (%s)\r\n", tag, strings.ReplaceAll(string(dec), "\x00", " "), blob)
					case "LOGIN":
						fmt.Fprintf(c, "%s NO [AUTHENTICATIONFAILED] you sent %s\r\n", tag, f[2])
					case "LOGOUT":
						fmt.Fprintf(c, "* BYE\r\n%s OK bye\r\n", tag)
						return
					default:
						fmt.Fprintf(c, "%s BAD you sent %s\r\n", tag, line)
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// canaryWorkflow reads through every held credential, with successes
// and failures, and tries every way a script has to see what was sent:
// the answer, its headers, the error (its text, stack, properties), the
// globals. Its consumers make three mutations that fail or are
// uncertain, two of them reconciled through a read that echoes again.
const canaryWorkflow = `
export default Keep.workflow({ name: "canary", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx, state) => {
    const seen = {};
    const look = (what, v) => {
      let s = "";
      try { s = JSON.stringify(v); } catch (e) { s = String(e); }
      if (v && typeof v === "object") {
        for (const k of Object.getOwnPropertyNames(v)) { try { s += " " + k + "=" + String(v[k]); } catch (e) {} }
      }
      s += " " + String(v);
      console.log(what, s);
      seen[what] = s;
    };
    const attempt = async (what, f) => {
      try { look(what, await f()); } catch (e) { look(what + " threw", e); look(what + " stack", e && e.stack); }
    };
    // a failure keep may try again ends the run: one per run, the one step.txt names
    const step = (await ctx.files.read({ path: "step.txt" })).content.trim();
    const risky = {
      reason: () => ctx.http.get({ url: API + "/reason" }),
      500: () => ctx.http.get({ url: API + "/500" }),
      tls: () => ctx.http.get({ url: TLS + "/ok" }),
      dns: () => ctx.http.get({ url: "http://canary-nowhere.invalid/ok" }),
      oauth: () => ctx.http.get({ url: OAUTH + "/ok" }),
      mcperror: () => ctx.mcp.echoer.fail({}),
      header: () => ctx.http.get({ url: API + "/ok", headers: { Authorization: "Bearer mine" } }),
    };
    if (risky[step]) await attempt(step, risky[step]);
    await attempt("ok", () => ctx.http.get({ url: API + "/ok" }));
    await attempt("redirect", () => ctx.http.get({ url: API + "/redir" }));
    await attempt("400", () => ctx.http.get({ url: API + "/400" }));
    await attempt("basic", () => ctx.http.get({ url: BASIC + "/ok" }));
    if (step !== "oauth") await attempt("oauth", () => ctx.http.get({ url: OAUTH + "/ok" }));
    await attempt("slack", () => ctx.slack.history({ channel: "C1" }));
    await attempt("mcp", () => ctx.mcp.echoer.whoami({}));
    await attempt("stdio", () => ctx.mcp.memory.read_graph({}));
    let g = "";
    for (const k of Object.getOwnPropertyNames(globalThis)) { try { g += k + "=" + JSON.stringify(globalThis[k]) + ";"; } catch (e) {} }
    console.log("globals", g);
    const n = (state?.n ?? 0) + 1;
    const id = ctx.registerInput({ source: "http", type: "resource", id: "i" + n, title: "Item " + (seen.ok || "").slice(0, 150) });
    await ctx.publish("t", { messageId: "m" + n, inputId: id, payload: { seen } });
    if (step === "throw") throw new Error("gave up: " + Object.values(seen).join(" | ").slice(0, 4000));
    return { n, seen };
  } } } });
`

// writerWorkflow makes three mutations of what an echo answered, that
// fail or are uncertain, two of them reconciled through a read that
// echoes again.
// Each consumer is in a workflow of its own (writer-http, writer-mcp,
// writer-slack): a mutation waiting on its reconciliation blocks the
// workflow.
func writerWorkflow(consumer string) string {
	src := writerWorkflowAll
	for _, c := range []string{"http", "mcp", "slack"} {
		if c != consumer {
			a := strings.Index(src, "    "+c+": Keep.consumer(")
			b := a + strings.Index(src[a:], "async next() {} }),\n") + len("async next() {} }),\n")
			src = src[:a] + src[b:]
		}
	}
	return strings.Replace(src, `name: "writer"`, `name: "writer-`+consumer+`"`, 1)
}

const writerWorkflowAll = `
export default Keep.workflow({ name: "writer", topics: { th: {}, tm: {}, ts: {} },
  producers: { p: { publishes: ["th", "tm", "ts"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.http.get({ url: API + "/ok" });
    const id = ctx.registerInput({ source: "http", type: "resource", id: "w1", title: "Echo " + r.json.auth });
    for (const t of ["th", "tm", "ts"]) await ctx.publish(t, { messageId: "w1", inputId: id, payload: { seen: JSON.stringify(r) } });
  } } },
  consumers: {
    http: Keep.consumer({ subscribe: ["th"],
      async prepare(ctx) { const [e] = await ctx.peek("th"); return e ? { reservations: [{ topic: "th", ids: [e.messageId] }], data: { seen: e.payload.seen } } : { reservations: [], data: {} }; },
      async mutate(ctx, p) { await ctx.http.request({ method: "POST", url: API + "/500", json: p.data, reconcile: { url: API + "/check" } }); },
      async next() {} }),
    mcp: Keep.consumer({ subscribe: ["tm"],
      async prepare(ctx) { const [e] = await ctx.peek("tm"); return e ? { reservations: [{ topic: "tm", ids: [e.messageId] }], data: { id: e.messageId } } : { reservations: [], data: {} }; },
      async mutate(ctx, p) { await ctx.mcp.echoer.post({ id: p.data.id, reconcile: { tool: "whoami", args: {}, match: { id: p.data.id } } }); },
      async next() {} }),
    slack: Keep.consumer({ subscribe: ["ts"],
      async prepare(ctx) { const [e] = await ctx.peek("ts"); return e ? { reservations: [{ topic: "ts", ids: [e.messageId] }], data: { id: e.messageId } } : { reservations: [], data: {} }; },
      async mutate(ctx, p) { await ctx.slack.post({ channel: "C1", text: p.data.id }); },
      async next() {} }),
  } });
`

// refusingWorkflows: one whose account the service refuses (401), one
// whose mail server refuses the password, echoing it.
const refusingWorkflows = `
export default Keep.workflow({ name: "refused", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    try { await ctx.http.get({ url: BASIC + "/401" }); } catch (e) { console.log(String(e), e.stack, JSON.stringify(e)); throw e; }
  } } } });
`

const mailWorkflow = `
export default Keep.workflow({ name: "mailer", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    try { await ctx.mail.search({}); } catch (e) { console.log(String(e), e.stack, JSON.stringify(e)); throw e; }
  } } } });
`

// TestCanariesStayHeld: accounts of every kind keep holds (an OAuth grant
// with refresh, a bearer token and a Basic password for HTTP hosts, an MCP
// HTTP server's token, a stdio MCP server's env secret, the mail password
// and the Slack token from KEEP_* variables), used by workflows that
// succeed, fail (401, 400, 500, a hostile reason phrase, TLS and DNS
// errors, a redirect to another host, a refused refresh that echoes its
// form), are reconciled, are tried with keep try and run by a daemon,
// against servers that echo back everything they were sent, and scripts
// that look for them everywhere. Then every artifact is searched for the
// secrets: every file keep wrote (the database, its WAL, keep.log, a
// backup), the output of every command, the TUI's screen, and the
// environment and command line of the script workers and MCP servers.
func TestCanariesStayHeld(t *testing.T) {
	t.Parallel()
	var c canaries
	for name, s := range map[string]string{"the token": canaryToken, "the Basic password": canaryBasic, "the MCP token": canaryMCP,
		"the stdio MCP secret": canaryStdio, "the mail password": canaryMail, "the Slack token": canarySlack, "the client secret": canaryClient} {
		c.add(name, s)
	}

	// a host keep must never send a credential to: what it received
	var elsewhere sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Store(r.Header.Get("Authorization")+"|"+r.URL.String(), true)
		fmt.Fprintf(w, `{"elsewhere":%q}`, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	// the hosts behind the accounts echo whatever Authorization they get,
	// in the body, a header, the error text and the reason phrase
	echo := func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		_, pw, _ := r.BasicAuth()
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, other.URL+"/seen", http.StatusFound)
			return
		case "/reason":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 500 you sent %s %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", auth, pw)
			buf.Flush()
			return
		}
		w.Header().Set("X-Echo-Auth", auth)
		w.Header().Set("X-Echo-Password", pw)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/401":
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+auth+`"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		case "/400":
			w.WriteHeader(http.StatusBadRequest)
		}
		fmt.Fprintf(w, `{"id":"x1","auth":%q,"password":%q,"raw":"%s %s"}`, auth, pw, auth, pw)
	}
	api := httptest.NewServer(http.HandlerFunc(echo))
	defer api.Close()
	tlsAPI := httptest.NewTLSServer(http.HandlerFunc(echo)) // keep does not trust its certificate
	defer tlsAPI.Close()
	basic := httptest.NewServer(http.HandlerFunc(echo))
	defer basic.Close()

	srv := oauthtest.New(t)
	srv.ClientSecret = canaryClient
	srv.Rotate = true
	oauthAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !srv.Active(oauthtest.Bearer(r)) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"refused":%q}`, r.Header.Get("Authorization"))
			return
		}
		echo(w, r)
	}))
	defer oauthAPI.Close()
	// the token endpoint, through a proxy that can turn hostile: a 503
	// whose body quotes the form keep sent (refresh token, client secret)
	var hostileTokens atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(mustURL(t, srv.URL))
	tokenEP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hostileTokens.Load() {
			r.ParseForm()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":"temporarily_unavailable","error_description":"you sent %s","auth":%q}`, r.Form.Encode(), r.Header.Get("Authorization"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer tokenEP.Close()

	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo-Auth", auth)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "chat.postMessage") {
			fmt.Fprintf(w, `{"ok":false,"error":"invalid_auth","echo":%q}`, auth)
			return
		}
		fmt.Fprintf(w, `{"ok":true,"messages":[{"ts":"1.0","text":%q}],"echo":%q}`, auth, auth)
	}))
	defer slackAPI.Close()

	// an MCP server over HTTP taking only the canary token; its tools
	// answer with the Authorization header they were called with
	var lastAuth atomic.Value
	lastAuth.Store("")
	said := func() string { return "you sent Authorization: " + lastAuth.Load().(string) }
	mcpServer := sdk.NewServer(&sdk.Implementation{Name: "echoer", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	mcpServer.AddTool(&sdk.Tool{Name: "whoami", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(`{"said":%q}`, said())}}}, nil
	})
	mcpServer.AddTool(&sdk.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: said()}}}, nil
	})
	mcpServer.AddTool(&sdk.Tool{Name: "post", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, fmt.Errorf("%s", said())
	})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpServer }, nil)
	mcpHTTP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		lastAuth.Store(auth)
		w.Header().Set("X-Echo-Auth", auth)
		if auth != "Bearer "+canaryMCP {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer mcpHTTP.Close()

	e := newEnv(t, "allow")
	e.extra = []string{"KEEP_CANARY_MAIL_PW=" + canaryMail, "KEEP_CANARY_SLACK=" + canarySlack}
	hostOf := func(u string) string { return mustURL(t, u).Host }
	cfg, _ := os.ReadFile(e.config)
	e.writeConfig(string(cfg) + fmt.Sprintf(`
[accounts.tok]
kind = "token"

[accounts.web]
kind = "basic"
username = "me"

[accounts.mcptok]
kind = "token"

[accounts.stdio]
kind = "token"

[accounts.oauth]
kind = "oauth2"
client_id = %q
auth_url = %q
token_url = %q
scopes = ["read"]

[connectors.http.hosts.%q]
account = "tok"
test_url = %q

[connectors.http.hosts.%q]
account = "tok"

[connectors.http.hosts."canary-nowhere.invalid"]
account = "tok"

[connectors.http.hosts.%q]
account = "web"
test_url = %q

[connectors.http.hosts.%q]
account = "oauth"
test_url = %q

[connectors.mail]
imap = %q
smtp = "127.0.0.1:1"
tls = "none"
username = "me@example.com"
password_env = "KEEP_CANARY_MAIL_PW"

[connectors.slack]
api_base = %q
token_env = "KEEP_CANARY_SLACK"

[mcp.echoer]
url = %q
account = "mcptok"
reads = ["whoami", "fail"]
timeout = "5s"

[mcp.memory]
command = %q
env = { MEMORY_FILE_PATH = %q, CANARY = { account = "stdio" } }
reads = ["read_graph"]
`, srv.ClientID, srv.AuthURL(), tokenEP.URL+"/token",
		hostOf(api.URL), api.URL+"/ok", hostOf(tlsAPI.URL), hostOf(basic.URL), basic.URL+"/ok", hostOf(oauthAPI.URL), oauthAPI.URL+"/ok",
		echoIMAP(t), slackAPI.URL, mcpHTTP.URL+"/mcp", mcptest.Bin(t, "mcp-server-memory"), filepath.Join(t.TempDir(), "memory.jsonl")))
	creds := filepath.Join(e.dir, "credentials.json")

	var outputs []string // every command's stdout and stderr
	keep := func(args ...string) result {
		t.Helper()
		r := e.keep(args...)
		outputs = append(outputs, "keep "+strings.Join(args, " ")+"\n"+r.String())
		return r
	}
	login := func(name, secret string) {
		t.Helper()
		cmd := e.command(context.Background(), "auth", "login", name)
		cmd.Stdin = strings.NewReader(secret + "\n")
		r := runCmd(t, cmd)
		outputs = append(outputs, "keep auth login "+name+"\n"+r.String())
		if r.code != 0 {
			t.Fatalf("keep auth login %s: %s", name, r)
		}
	}
	login("tok", canaryToken)
	login("web", canaryBasic)
	login("mcptok", canaryMCP)
	login("stdio", canaryStdio)
	r := loginThroughBrowser(t, e, srv, canaryClient+"\n", "oauth")
	outputs = append(outputs, r.String())
	c.addIssued(t, creds)
	for _, a := range []string{"tok", "web", "oauth"} {
		keep("auth", "test", a)
	}
	keep("mcp", "tools", "echoer")
	keep("mcp", "tools", "memory")

	subst := strings.NewReplacer("API", `"`+api.URL+`"`, "TLS", `"`+tlsAPI.URL+`"`, "BASIC", `"`+basic.URL+`"`, "OAUTH", `"`+oauthAPI.URL+`"`)
	wf := e.file(e.dir, "canary.js", subst.Replace(canaryWorkflow))
	refusedWF := e.file(e.dir, "refused.js", subst.Replace(refusingWorkflows))
	mailWF := e.file(e.dir, "mailer.js", mailWorkflow)
	var writers []string
	for _, c := range []string{"http", "mcp", "slack"} {
		writers = append(writers, e.file(e.dir, "writer-"+c+".js", subst.Replace(writerWorkflow(c))))
	}
	// step names the failure keep may try again the next run of canary
	// meets (step.txt); none: none
	step := func(name string) {
		t.Helper()
		e.file(e.root, "step.txt", name)
		if r := keep("run-now", "canary"); r.code == 3 {
			keep("retry", "canary")
		}
		keep("drain", "--timeout", "1m")
	}
	e.file(e.root, "step.txt", "none")
	keep("validate", wf)
	keep("try", wf)
	keep("try", wf, "--json")
	if r := keep("deploy", wf); r.code != 0 {
		t.Fatalf("deploy: %s", r)
	}
	keep("drain", "--timeout", "1m")
	for _, name := range []string{"reason", "500", "tls", "dns", "header", "mcperror", "throw"} {
		step(name)
	}

	// the access token expires: keep refreshes it (a new refresh token
	// too), then the token endpoint turns hostile
	srv.ExpireAccess()
	step("none")
	if srv.Refreshes() == 0 {
		t.Error("keep never refreshed the OAuth token: the check below proves less")
	}
	c.addIssued(t, creds)
	hostileTokens.Store(true)
	srv.ExpireAccess()
	step("oauth")
	keep("auth", "test", "oauth")
	hostileTokens.Store(false)
	e.file(e.root, "step.txt", "none")
	keep("retry", "canary")

	// a daemon runs it again: its workers and MCP servers are looked at
	// while they live
	d := startDaemon(t, e)
	stopped := false
	defer func() {
		if !stopped {
			d.kill(t)
		}
	}()
	awaitSocket(t, e, d, 30*time.Second)
	// every process under the daemon while it runs canary again and again,
	// until a script worker and the stdio server have both been seen
	looked := map[int]bool{}
	var worker, node bool
	deadline, next := time.Now().Add(time.Minute), time.Time{}
	for ; !worker || !node; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("under the daemon: a worker %v, the stdio MCP server %v\n%s", worker, node, d.errb.String())
		}
		if time.Now().After(next) {
			keep("run-now", "canary")
			next = time.Now().Add(2 * time.Second)
		}
		for _, p := range descendants(d.cmd.Process.Pid) {
			env, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
			cmdline, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			if looked[p] || err1 != nil || err2 != nil || len(env) == 0 {
				continue
			}
			looked[p] = true
			c.scan(t, fmt.Sprintf("the command line of pid %d (%q)", p, cmdline), cmdline)
			worker = worker || bytes.Contains(env, []byte("KEEP_SANDBOX_WORKER="))
			if bytes.Contains(env, []byte("MEMORY_FILE_PATH=")) {
				node = true
				// the stdio server is given its own secret, by design, and no other
				if !bytes.Contains(env, []byte("CANARY="+canaryStdio)) {
					t.Errorf("the stdio MCP server (pid %d) was not given its account's secret: the check proves nothing", p)
				}
				env = bytes.ReplaceAll(env, []byte("CANARY="+canaryStdio), nil)
			}
			c.scan(t, fmt.Sprintf("the environment of pid %d (%q)", p, cmdline), env)
		}
	}
	keep("drain", "--timeout", "1m")
	d.stop(t)
	stopped = true
	outputs = append(outputs, "the TUI\n"+tuiScreens(t, e))

	// the workflows that write, and those refused by their services
	for _, w := range writers {
		keep("try", w)
		keep("try", w, "--json")
		keep("deploy", w)
	}
	keep("deploy", refusedWF)
	keep("deploy", mailWF)
	keep("drain", "--timeout", "1m")

	backup := filepath.Join(e.dir, "backup.db")
	for _, args := range [][]string{
		{"workflows"}, {"workflows", "--json"}, {"status"}, {"status", "--json"}, {"attention"}, {"attention", "--json"},
		{"auth", "list"}, {"auth", "list", "--json"}, {"grants"}, {"grants", "--json"}, {"backup", backup},
	} {
		keep(args...)
	}
	for _, w := range []string{"canary", "writer-http", "writer-mcp", "writer-slack", "refused", "mailer"} {
		for _, cmd := range []string{"runs", "logs", "mutations", "events", "inputs"} {
			keep(cmd, w)
			keep(cmd, w, "--json")
		}
	}
	// each run's own view
	for _, id := range runIDs(t, e, "canary") {
		keep("logs", "canary", "--run", id)
		keep("logs", "canary", "--run", id, "--json")
	}

	// what the checks below see is what was echoed: prove the echoes came
	all := strings.Join(outputs, "\n")
	for _, want := range []string{"[redacted]", "you sent", "invalid_auth"} {
		if !strings.Contains(all, want) {
			t.Errorf("no output shows %q: the servers' echoes never reached keep, and the scan proves little", want)
		}
	}
	if strings.Contains(all, "elsewhere") {
		elsewhere.Range(func(k, _ any) bool {
			if a, _, _ := strings.Cut(k.(string), "|"); a != "" {
				t.Errorf("another host got Authorization %q", a)
			}
			return true
		})
	}
	for _, o := range outputs {
		c.scan(t, "the output of "+strings.SplitN(o, "\n", 2)[0], []byte(o))
	}
	c.scan(t, "the daemon's output", append(d.stdout.Bytes(), d.errb.Bytes()...))
	c.scanTree(t, e.dir)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// runIDs lists the ids of workflow's runs.
func runIDs(t *testing.T, e *env, workflow string) []string {
	t.Helper()
	var ids []string
	for _, r := range jsonOf[[]struct {
		ID any `json:"id"`
	}](e, "runs", workflow) {
		ids = append(ids, fmt.Sprint(r.ID))
	}
	return ids
}

// tuiScreens is the TUI's screens, pane by pane, each list and the detail
// of its first row, captured through tmux; the TUI is ended after.
func tuiScreens(t *testing.T, e *env) string {
	t.Helper()
	s := startTUI(t, 160, 50, "env "+strings.Join(e.extra, " ")+" HOME="+e.dir+" NO_COLOR=1 "+keepBin+" --db "+e.db+" --config "+e.config)
	s.waitFor("canary", false)
	var screens strings.Builder
	capture := func() {
		time.Sleep(500 * time.Millisecond)
		screens.WriteString(s.screen() + "\n")
	}
	for _, pane := range []string{"1", "2", "3", "4", "5"} {
		s.keys(pane)
		capture()
		s.keys("Enter")
		capture()
		s.keys("Escape")
	}
	s.run("kill-server")
	time.Sleep(time.Second) // the TUI's engine lets go of the database
	return screens.String()
}
