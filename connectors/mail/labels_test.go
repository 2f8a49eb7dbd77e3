package mail

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
)

// gimap is a small scripted IMAP server with Gmail's X-GM-EXT-1: one
// message (UID 5 in INBOX, UIDVALIDITY 7) whose labels STORE and FETCH of
// X-GM-LABELS change and read, on the wire as Gmail speaks it. go-imap's
// servers have no such extension.
type gimap struct {
	mu     sync.Mutex
	labels map[string]bool
	// dropAfterStore applies the next STORE and hangs up without a reply.
	dropAfterStore bool
	// throttle refuses the next STORE as Gmail does when it is busy.
	throttle bool
	gmail    bool
	// hostile, when set, is written in place of the answer to the first
	// UID FETCH (when fetch) or UID STORE, and the session then waits
	// for the client to hang up
	hostile []byte
	fetch   bool
	// noise is written before every answer to UID FETCH
	noise string
}

// sendHostile writes g.hostile for the command kind when it is the one
// chosen, and says whether it did.
func (g *gimap) sendHostile(c net.Conn, fetch bool) bool {
	g.mu.Lock()
	h := g.hostile
	if h == nil || g.fetch != fetch {
		g.mu.Unlock()
		return false
	}
	g.hostile = nil
	g.mu.Unlock()
	_, _ = c.Write(h)
	_, _ = io.Copy(io.Discard, c)
	return true
}

func (g *gimap) labelList() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for l := range g.labels {
		if strings.HasPrefix(l, `\`) {
			out = append(out, l)
		} else {
			out = append(out, `"`+strings.ReplaceAll(l, `"`, `\"`)+`"`)
		}
	}
	sort.Strings(out)
	return "(" + strings.Join(out, " ") + ")"
}

// parseList reads "(a "b c" \Inbox)" into its strings.
func parseList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	var out []string
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			i++
		case s[i] == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			out = append(out, b.String())
			i = j + 1
		default:
			j := strings.IndexByte(s[i:], ' ')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, s[i:i+j])
			i += j
		}
	}
	return out
}

func (g *gimap) serve(t *testing.T) string {
	t.Helper()
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	caps := "IMAP4rev1 SASL-IR AUTH=PLAIN AUTH=XOAUTH2"
	if g.gmail {
		caps += " X-GM-EXT-1"
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go g.session(c, caps)
		}
	}()
	return ln.Addr().String()
}

func (g *gimap) session(c net.Conn, caps string) {
	defer c.Close()
	r := bufio.NewReader(c)
	fmt.Fprintf(c, "* OK [CAPABILITY %s] Gimap ready\r\n", caps)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		tag, rest, _ := strings.Cut(line, " ")
		cmd := strings.ToUpper(rest)
		switch {
		case strings.HasPrefix(cmd, "CAPABILITY"):
			fmt.Fprintf(c, "* CAPABILITY %s\r\n%s OK done\r\n", caps, tag)
		case strings.HasPrefix(cmd, "AUTHENTICATE XOAUTH2"):
			f := strings.Fields(rest)
			var ir string
			if len(f) > 2 {
				ir = f[2]
			} else {
				fmt.Fprintf(c, "+ \r\n")
				if ir, err = r.ReadString('\n'); err != nil {
					return
				}
			}
			dec, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(ir))
			if !strings.Contains(string(dec), "auth=Bearer "+testToken+"\x01") {
				fmt.Fprintf(c, "+ eyJzdGF0dXMiOiI0MDEifQ==\r\n")
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				fmt.Fprintf(c, "%s NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)\r\n", tag)
				continue
			}
			fmt.Fprintf(c, "%s OK [CAPABILITY %s] authenticated\r\n", tag, caps)
		case strings.HasPrefix(cmd, "LOGIN"):
			if !strings.Contains(rest, testPassword) {
				fmt.Fprintf(c, "%s NO [AUTHENTICATIONFAILED] Invalid credentials\r\n", tag)
				continue
			}
			fmt.Fprintf(c, "%s OK [CAPABILITY %s] logged in\r\n", tag, caps)
		case strings.HasPrefix(cmd, "SELECT"), strings.HasPrefix(cmd, "EXAMINE"):
			fmt.Fprintf(c, "* FLAGS (\\Seen)\r\n* 1 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 6] ok\r\n%s OK [READ-WRITE] selected\r\n", tag)
		case strings.HasPrefix(cmd, "UID FETCH") && g.sendHostile(c, true),
			strings.HasPrefix(cmd, "UID STORE") && g.sendHostile(c, false):
			return
		case strings.HasPrefix(cmd, "UID FETCH"):
			fmt.Fprintf(c, "%s* 1 FETCH (UID 5 X-GM-LABELS %s)\r\n%s OK done\r\n", g.noise, g.labelList(), tag)
		case strings.HasPrefix(cmd, "UID STORE 5 "):
			item := strings.Fields(rest)[3]
			list := parseList(rest[strings.Index(rest, "("):])
			g.mu.Lock()
			if g.throttle {
				g.throttle = false
				g.mu.Unlock()
				fmt.Fprintf(c, "%s NO [THROTTLED] Too many commands\r\n", tag)
				continue
			}
			for _, l := range list {
				if strings.HasPrefix(item, "+") {
					g.labels[l] = true
				} else {
					delete(g.labels, l)
				}
			}
			drop := g.dropAfterStore
			g.dropAfterStore = false
			g.mu.Unlock()
			if drop {
				return
			}
			fmt.Fprintf(c, "* 1 FETCH (UID 5 X-GM-LABELS %s)\r\n%s OK done\r\n", g.labelList(), tag)
		case strings.HasPrefix(cmd, "LOGOUT"):
			fmt.Fprintf(c, "* BYE\r\n%s OK bye\r\n", tag)
			return
		default:
			fmt.Fprintf(c, "%s BAD unknown command\r\n", tag)
		}
	}
}

const testToken = "ya29.gmail-token"

func TestLabels(t *testing.T) {
	t.Parallel()

	labelCall := func(params map[string]any) connectors.Call {
		params["id"] = "INBOX:7:5"
		return connectors.Call{Method: "label", Params: params, IdempotencyKey: "label-1"}
	}

	t.Run("Labels are added and removed with X-GM-LABELS and reconciled by re-reading them", func(t *testing.T) {
		t.Parallel()
		g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
		call := labelCall(map[string]any{"add": []any{"Work stuff", "Receipts"}, "remove": `\Inbox`})
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.NotApplied || err != nil {
			t.Fatalf("before: %v %v", v, err)
		}
		res, err := c.Do(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(res.(map[string]any)["labels"])
		if got != "[Receipts Work stuff]" {
			t.Fatalf("labels %s", got)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("after: %v %v", v, err)
		}
	})

	t.Run("A STORE whose reply is lost is uncertain, and reconciliation finds it applied", func(t *testing.T) {
		t.Parallel()
		g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}, dropAfterStore: true}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
		call := labelCall(map[string]any{"add": "Later"})
		if _, err := c.Do(context.Background(), call); connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("got %v", err)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("A server without X-GM-EXT-1 refuses labels with a clear error", func(t *testing.T) {
		t.Parallel()
		g := &gimap{labels: map[string]bool{}}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
		_, err := c.Do(context.Background(), labelCall(map[string]any{"add": "x"}))
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "X-GM-EXT-1") || !strings.Contains(err.Error(), "move") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A throttled STORE is transient and changes nothing", func(t *testing.T) {
		t.Parallel()
		g := &gimap{gmail: true, labels: map[string]bool{}, throttle: true}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
		call := labelCall(map[string]any{"add": "Later"})
		if _, err := c.Do(context.Background(), call); connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("got %v", err)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.NotApplied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("An expired token is refreshed once over XOAUTH2", func(t *testing.T) {
		t.Parallel()
		g := &gimap{gmail: true, labels: map[string]bool{}}
		b := setup(t)
		acct := &fakeAccount{user: testUser, tokens: []string{"expired", testToken}}
		c := b.connector(t, func(cfg *Config) { cfg.IMAP, cfg.Username, cfg.Password, cfg.Account = g.serve(t), "", "", acct })
		if _, err := c.Do(context.Background(), labelCall(map[string]any{"add": "x"})); err != nil {
			t.Fatal(err)
		}
		bad := &fakeAccount{user: testUser, tokens: []string{"revoked"}}
		c = b.connector(t, func(cfg *Config) { cfg.IMAP, cfg.Username, cfg.Password, cfg.Account = g.serve(t), "", "", bad })
		if _, err := c.Do(context.Background(), labelCall(map[string]any{"add": "x"})); connectors.ClassOf(err) != connectors.Auth || bad.invalidated == 0 {
			t.Fatalf("revoked: %v (invalidated %d)", err, bad.invalidated)
		}
	})

	t.Run("A refused login is an auth failure", func(t *testing.T) {
		t.Parallel()
		g := &gimap{gmail: true, labels: map[string]bool{}}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.IMAP, cfg.Password = g.serve(t), "wrong" })
		if _, err := c.Do(context.Background(), labelCall(map[string]any{"add": "x"})); connectors.ClassOf(err) != connectors.Auth {
			t.Fatalf("got %v", err)
		}
	})
}
