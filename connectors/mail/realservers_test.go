package mail

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
)

// The real servers: Dovecot (IMAP) and Postfix (SMTP submission, delivering
// into the Dovecot mailboxes) from Debian's packages, installed by
// .ci/servers/mail.sh, each started by the test with its own configuration
// in a temporary directory, on loopback. Postfix authenticates through
// Dovecot's SASL socket, and Dovecot checks OAuth tokens against an
// introspection endpoint the test serves, so one login table covers both
// servers and every mechanism.

const (
	realUser     = "me@example.test"
	realPassword = "real-s3cret-pw"
	realOther    = "ann@example.test"
	realToken    = "good-access-token"
	realSent     = "Sent Items" // not a name anyone would guess: SPECIAL-USE finds it
	mailUID      = 65534        // nobody: Postfix's virtual agent and Dovecot's mail processes
)

// realMail is one running Dovecot + Postfix pair.
type realMail struct {
	dir      string
	imap     string // plain/STARTTLS IMAP
	imaps    string // implicit TLS IMAP
	smtp     string // submission, STARTTLS offered
	caFile   string
	maildirs string
	tokens   atomic.Int64 // introspection requests seen
}

// requireRealServers skips (or, under CI=true, fails) when the daemons are
// not installed or we are not root (they switch users).
func requireRealServers(t *testing.T) {
	t.Helper()
	var missing []string
	for _, bin := range []string{"dovecot", "postfix"} {
		if _, err := exec.LookPath(bin); err != nil {
			if _, err := os.Stat("/usr/sbin/" + bin); err != nil {
				missing = append(missing, bin)
			}
		}
	}
	reason := ""
	switch {
	case len(missing) > 0:
		reason = "not installed: " + strings.Join(missing, ", ") + " (run .ci/servers/mail.sh as root)"
	case os.Geteuid() != 0:
		reason = "dovecot and postfix need root to switch to their users in these tests"
	}
	if reason == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(reason)
	}
	t.Skip(reason)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// certFiles writes a self-signed certificate for 127.0.0.1 and its key.
func certFiles(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, key, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return cert, key
}

// startRealMail starts Dovecot and Postfix for one test.
func startRealMail(t *testing.T) *realMail {
	t.Helper()
	requireRealServers(t)
	// Not t.TempDir(): unix socket paths must stay short, and the mail
	// processes (uid nobody) must be able to reach the maildirs.
	dir, err := os.MkdirTemp("", "keepmail")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &realMail{dir: dir, maildirs: filepath.Join(dir, "mail")}
	for _, d := range []string{"run", "state", "mail", "pf", "pf/etc", "pf/queue", "pf/data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(m.maildirs, mailUID, mailUID); err != nil {
		t.Fatal(err)
	}
	cert, key := certFiles(t, dir)
	m.caFile = cert

	// The OAuth server's token introspection (RFC 7662), as Dovecot's
	// passdb oauth2 calls it.
	intro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.tokens.Add(1)
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.Form.Get("token") == realToken {
			_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "username": realUser})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"active": false})
	}))
	t.Cleanup(intro.Close)
	writeFile(t, filepath.Join(dir, "oauth2.conf"), fmt.Sprintf(`introspection_mode = post
introspection_url = %s/introspect
username_attribute = username
active_attribute = active
active_value = true
`, intro.URL))
	writeFile(t, filepath.Join(dir, "passwd"), fmt.Sprintf("%s:{PLAIN}%s::::::\n%s:{PLAIN}other-pw::::::\n", realUser, realPassword, realOther))

	imapPort, imapsPort, smtpPort := freePort(t), freePort(t), freePort(t)
	m.imap = fmt.Sprintf("127.0.0.1:%d", imapPort)
	m.imaps = fmt.Sprintf("127.0.0.1:%d", imapsPort)
	m.smtp = fmt.Sprintf("127.0.0.1:%d", smtpPort)
	writeFile(t, filepath.Join(dir, "dovecot.conf"), fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[1]s/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <%[2]s
ssl_key = <%[3]s
auth_mechanisms = plain login xoauth2 oauthbearer
disable_plaintext_auth = no
auth_failure_delay = 0
first_valid_uid = 1
mail_location = maildir:%[1]s/mail/%%u
default_internal_user = dovecot
default_login_user = dovenull
passdb {
  driver = passwd-file
  args = %[1]s/passwd
}
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = %[1]s/oauth2.conf
}
userdb {
  driver = static
  args = uid=%[4]d gid=%[4]d home=%[1]s/mail/%%u
}
namespace inbox {
  inbox = yes
  mailbox "%[5]s" {
    special_use = \Sent
    auto = subscribe
  }
  mailbox Archive {
    special_use = \Archive
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    port = %[6]d
  }
  inet_listener imaps {
    port = %[7]d
    ssl = yes
  }
}
# No growing delays for the failures the tests cause on purpose.
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service auth {
  unix_listener %[1]s/auth-client {
    mode = 0666
  }
}
`, dir, cert, key, mailUID, realSent, imapPort, imapsPort))

	dovecot := exec.Command("dovecot", "-c", filepath.Join(dir, "dovecot.conf"), "-F")
	var dovecotOut bytes.Buffer
	dovecot.Stdout, dovecot.Stderr = &dovecotOut, &dovecotOut
	if err := dovecot.Start(); err != nil {
		t.Fatalf("start dovecot: %v", err)
	}
	t.Cleanup(func() {
		_ = dovecot.Process.Signal(syscall.SIGTERM)
		_ = dovecot.Wait()
	})

	pf := filepath.Join(dir, "pf")
	if err := os.Chown(filepath.Join(pf, "data"), postfixUID(t), -1); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pf, "etc", "vmailbox"), fmt.Sprintf("%s %s/\n%s %s/\n", realUser, realUser, realOther, realOther))
	writeFile(t, filepath.Join(pf, "etc", "main.cf"), fmt.Sprintf(`compatibility_level = 3.6
queue_directory = %[1]s/queue
data_directory = %[1]s/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.example.test
mydomain = example.test
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
maillog_file_prefixes = %[1]s
maillog_file = %[1]s/maillog
smtputf8_enable = no
alias_maps =
alias_database =
local_recipient_maps =
relayhost =
virtual_mailbox_domains = example.test
virtual_mailbox_base = %[2]s
virtual_mailbox_maps = texthash:%[1]s/etc/vmailbox
virtual_uid_maps = static:%[3]d
virtual_gid_maps = static:%[3]d
virtual_minimum_uid = 1
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = %[4]s/auth-client
smtpd_relay_restrictions = permit_sasl_authenticated, reject
smtpd_recipient_restrictions = permit_sasl_authenticated, reject
smtpd_tls_security_level = may
smtpd_tls_cert_file = %[5]s
smtpd_tls_key_file = %[6]s
smtpd_tls_auth_only = no
smtpd_error_sleep_time = 0s
`, pf, m.maildirs, mailUID, dir, cert, key))
	writeFile(t, filepath.Join(pf, "etc", "master.cf"), fmt.Sprintf(`%d inet n - n - - smtpd
pickup unix n - n 60 1 pickup
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
tlsmgr unix - - n 1000? 1 tlsmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
smtp unix - - n - - smtp
relay unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
virtual unix - n n - - virtual
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
`, smtpPort))
	if out, err := exec.Command("postfix", "-c", filepath.Join(pf, "etc"), "check").CombinedOutput(); err != nil {
		t.Fatalf("postfix check: %v\n%s", err, out)
	}
	postfix := exec.Command("postfix", "-c", filepath.Join(pf, "etc"), "start-fg")
	var postfixOut bytes.Buffer
	postfix.Stdout, postfix.Stderr = &postfixOut, &postfixOut
	if err := postfix.Start(); err != nil {
		t.Fatalf("start postfix: %v", err)
	}
	t.Cleanup(func() {
		_ = exec.Command("postfix", "-c", filepath.Join(pf, "etc"), "stop").Run()
		done := make(chan struct{})
		go func() { _ = postfix.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = postfix.Process.Kill()
		}
	})

	for _, addr := range []string{m.imap, m.imaps, m.smtp} {
		if err := waitListening(addr, 20*time.Second); err != nil {
			logs, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			maillog, _ := os.ReadFile(filepath.Join(pf, "maillog"))
			t.Fatalf("%v\ndovecot: %s\n%s\npostfix: %s\n%s", err, dovecotOut.String(), logs, postfixOut.String(), maillog)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			maillog, _ := os.ReadFile(filepath.Join(pf, "maillog"))
			t.Logf("dovecot log:\n%s\npostfix log:\n%s", logs, maillog)
		}
	})
	return m
}

func postfixUID(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("id", "-u", "postfix").Output()
	if err != nil {
		t.Fatalf("no postfix user: %v", err)
	}
	uid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return uid
}

// waitListening waits for a daemon to start listening: it is started
// asynchronously and says nothing when it is ready.
func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not listening: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// config is a connector configuration for the real servers: password
// login, STARTTLS on both with the test's CA, the Sent folder left to
// SPECIAL-USE, and Postfix's own behaviour (it files nothing in Sent).
func (m *realMail) config() Config {
	return Config{
		IMAP: m.imap, SMTP: m.smtp, Username: realUser, Password: realPassword,
		TLS: TLSStartTLS, CAFile: m.caFile, Timeout: 30 * time.Second,
		MessageIDSecret: testIDSecret,
	}
}

func (m *realMail) connector(t *testing.T, edit func(*Config)) *Connector {
	t.Helper()
	return newConnector(t, m.config(), edit)
}

// delivered counts the messages delivered to user's inbox (the maildir's
// new and cur).
func (m *realMail) delivered(t *testing.T, user string) int {
	t.Helper()
	n := 0
	for _, sub := range []string{"new", "cur"} {
		entries, err := os.ReadDir(filepath.Join(m.maildirs, user, sub))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n += len(entries)
	}
	return n
}

// deliveredWith waits up to within for a message with subject in user's
// maildir and says how many it holds then.
func (m *realMail) deliveredWith(t *testing.T, user, subject string, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n := 0
		for _, sub := range []string{"new", "cur"} {
			dir := filepath.Join(m.maildirs, user, sub)
			entries, err := os.ReadDir(dir)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err == nil && (bytes.Contains(data, []byte("\nSubject: "+subject+"\r\n")) || bytes.Contains(data, []byte("\nSubject: "+subject+"\n"))) {
					n++
				}
			}
		}
		if n > 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitDelivery waits for Postfix to deliver the message with subject to
// the account's inbox and returns its id. It reads INBOX as a plain
// mailbox (the connector's inbox set elsewhere), so nothing is hidden or
// tidied on the way.
func (m *realMail) awaitDelivery(t *testing.T, subject string) string {
	t.Helper()
	c := m.connector(t, func(cfg *Config) { cfg.Inbox = "Archive" })
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := do(t, c, "search", map[string]any{"mailbox": "INBOX", "subject": subject})
		if msgs := res["messages"].([]any); len(msgs) == 1 {
			return msgs[0].(map[string]any)["id"].(string)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q was never delivered", subject)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lostReplyProxy forwards SMTP to target but, once the client has sent the
// end of a message (CRLF.CRLF), drops the server's reply to it and hangs up
// on the client: the server got the whole message, the client never hears
// whether it was accepted.
func lostReplyProxy(t *testing.T, target string) string {
	t.Helper()
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			var dropped atomic.Bool
			wg.Add(2)
			go func() { // server → client, until the end of the message
				defer wg.Done()
				defer server.Close()
				buf := make([]byte, 4096)
				for {
					n, err := server.Read(buf)
					if n > 0 && !dropped.Load() {
						_, _ = client.Write(buf[:n])
					}
					if err != nil {
						return
					}
					if dropped.Load() && n > 0 {
						// The reply to the final dot has come and gone.
						return
					}
				}
			}()
			go func() { // client → server
				defer wg.Done()
				defer client.Close()
				var window []byte
				buf := make([]byte, 4096)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						window = append(window, buf[:n]...)
						end := bytes.Contains(window, []byte("\r\n.\r\n"))
						if end {
							dropped.Store(true)
						}
						_, _ = server.Write(buf[:n])
						if end {
							return
						}
						if len(window) > 8 {
							window = window[len(window)-8:]
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// reconcileUntil asks Reconcile until it answers something other than
// Unknown, as the host does with back-off: delivery is asynchronous.
func reconcileUntil(t *testing.T, c *Connector, call connectors.Call) (connectors.Verdict, any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, res, err := c.Reconcile(context.Background(), call)
		if err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if v != connectors.Unknown || time.Now().After(deadline) {
			return v, res
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestRealServers(t *testing.T) {
	t.Parallel()
	m := startRealMail(t)

	t.Run("A send over STARTTLS with ca_file is delivered and filed in the Sent folder found by SPECIAL-USE", func(t *testing.T) {
		c := m.connector(t, nil)
		call := sendCall("real-send-1", map[string]any{"to": realOther, "subject": "Hello Dovecot", "body": "over Postfix"})
		res, err := c.Do(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		if r := res.(map[string]any); r["messageId"] != c.messageIDFor("real-send-1") || r["sentCopyError"] != nil {
			t.Fatalf("result %v", r)
		}
		sent := do(t, c, "search", map[string]any{"mailbox": realSent})
		if msgs := sent["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Hello Dovecot" {
			t.Fatalf("%q holds %v", realSent, sent)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("A send whose final reply was lost is confirmed by the copy routed back, and not sent twice", func(t *testing.T) {
		before := m.delivered(t, realOther)
		c := m.connector(t, func(cfg *Config) {
			cfg.SMTP = lostReplyProxy(t, m.smtp)
			cfg.TLS = TLSNone // the proxy must see the end of the message
			cfg.IMAP = m.imap
		})
		call := sendCall("real-lost-1", map[string]any{"to": realOther, "subject": "Lost reply", "body": "did it go?"})
		_, err := c.Do(context.Background(), call)
		if connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("want uncertain, got %v", err)
		}
		v, res := reconcileUntil(t, c, call)
		if v != connectors.Applied {
			t.Fatalf("reconcile: %v %v (Sent holds only what keep filed, and the send failed before that)", v, res)
		}
		if r := res.(map[string]any); r["messageId"] != c.messageIDFor("real-lost-1") || r["confirmedBy"] == nil || r["sentCopyError"] != nil {
			t.Fatalf("result %v", r)
		}
		// counted by subject: the send above reaches this maildir
		// whenever Postfix gets to it, which under load can be after before
		// was read
		if n := m.deliveredWith(t, realOther, "Lost reply", 30*time.Second); n != 1 {
			t.Fatalf("%s got %d copies (%d messages in all since the send)", realOther, n, m.delivered(t, realOther)-before)
		}
		// The copy was filed: in Sent now, out of the inbox.
		plain := m.connector(t, nil)
		sent := do(t, plain, "search", map[string]any{"mailbox": realSent, "subject": "Lost reply"})
		if msgs := sent["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("Sent: %v", sent)
		}
		if v, _, err := plain.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("again: %v %v", v, err)
		}
	})

	t.Run("The copies routed back never show in a search of the inbox", func(t *testing.T) {
		c := m.connector(t, nil)
		call := sendCall("real-self-1", map[string]any{"to": realOther, "subject": "Self copy", "body": "x"})
		if _, err := c.Do(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		// Wait for the copy to land, then search.
		m.awaitDelivery(t, "Self copy")
		res := do(t, c, "search", map[string]any{"subject": "Self copy"})
		if msgs := res["messages"].([]any); len(msgs) != 0 {
			t.Fatalf("inbox search shows keep's own copy: %v", msgs)
		}
		// And the search tidied it away: Sent already held the copy keep
		// appended, so the inbox one is gone and Sent holds exactly one.
		raw := m.connector(t, func(cfg *Config) { cfg.Inbox = "Archive" })
		if msgs := do(t, raw, "search", map[string]any{"mailbox": "INBOX", "subject": "Self copy"})["messages"].([]any); len(msgs) != 0 {
			t.Fatalf("the copy is still in the inbox: %v", msgs)
		}
		if msgs := do(t, raw, "search", map[string]any{"mailbox": realSent, "subject": "Self copy"})["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("Sent holds %d copies", len(msgs))
		}
	})

	t.Run("Mail a workflow sends to the account itself is mail, shown and left in the inbox", func(t *testing.T) {
		c := m.connector(t, nil)
		if _, err := c.Do(context.Background(), sendCall("real-digest-1", map[string]any{"to": realUser, "subject": "Daily digest"})); err != nil {
			t.Fatal(err)
		}
		m.awaitDelivery(t, "Daily digest")
		if msgs := do(t, c, "search", map[string]any{"subject": "Daily digest"})["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("a second search lost it: %v", msgs)
		}
	})

	t.Run("OAUTHBEARER and XOAUTH2 log in to both servers with a token checked by introspection", func(t *testing.T) {
		for _, mech := range []string{AuthOAuthBearer, AuthXOAuth2} {
			before := m.tokens.Load()
			acct := &fakeAccount{user: realUser, tokens: []string{realToken}}
			c := m.connector(t, func(cfg *Config) {
				cfg.Username, cfg.Password, cfg.Account, cfg.Auth = "", "", acct, mech
			})
			do(t, c, "search", nil)
			if _, err := c.Do(context.Background(), sendCall("real-oauth-"+mech, map[string]any{"to": realOther, "subject": mech})); err != nil {
				t.Fatalf("%s send: %v", mech, err)
			}
			if m.tokens.Load() == before {
				t.Fatalf("%s: the introspection endpoint was never asked", mech)
			}
		}
	})

	t.Run("An oauth2 account is offered XOAUTH2 by default", func(t *testing.T) {
		acct := &fakeAccount{user: realUser, tokens: []string{realToken}}
		c := m.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", acct })
		do(t, c, "search", nil)
	})

	t.Run("A refused token is refreshed once; refused again it is an auth failure", func(t *testing.T) {
		acct := &fakeAccount{user: realUser, tokens: []string{"expired-token", realToken}}
		c := m.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", acct })
		do(t, c, "search", nil)
		acct = &fakeAccount{user: realUser, tokens: []string{"expired-token", realToken}}
		c = m.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", acct })
		if _, err := c.Do(context.Background(), sendCall("real-refresh", map[string]any{"to": realOther})); err != nil {
			t.Fatalf("smtp after a refresh: %v", err)
		}
		bad := &fakeAccount{user: realUser, tokens: []string{"revoked-token"}}
		c = m.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", bad })
		_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
		if connectors.ClassOf(err) != connectors.Auth || strings.Contains(err.Error(), "revoked-token") {
			t.Fatalf("imap: %v", err)
		}
		_, err = c.Do(context.Background(), sendCall("real-bad-token", map[string]any{"to": realOther}))
		if connectors.ClassOf(err) != connectors.Auth || strings.Contains(err.Error(), "revoked-token") {
			t.Fatalf("smtp: %v", err)
		}
		if bad.invalidated == 0 {
			t.Fatal("the account was never told its token was refused")
		}
	})

	t.Run("A wrong password is an auth failure on both servers", func(t *testing.T) {
		c := m.connector(t, func(cfg *Config) { cfg.Password = "wrong" })
		if _, err := c.Do(context.Background(), connectors.Call{Method: "search"}); connectors.ClassOf(err) != connectors.Auth {
			t.Fatalf("imap: %v", err)
		}
		if _, err := c.Do(context.Background(), sendCall("real-wrong", map[string]any{"to": realOther})); connectors.ClassOf(err) != connectors.Auth {
			t.Fatalf("smtp: %v", err)
		}
	})

	t.Run("keep auth test logs in to Dovecot and Postfix, and a wrong password is the account's to sign in again", func(t *testing.T) {
		for _, pw := range []string{realPassword, "wrong-real-pw"} {
			s := passwordStoreFor(t, realUser, pw)
			a, _ := s.Account("box")
			c := m.connector(t, func(cfg *Config) { cfg.Account, cfg.Username, cfg.Password = a, "", "" })
			done, err := c.TestAccount(context.Background(), "box")
			if pw == realPassword && (err != nil || len(done) != 2) {
				t.Fatalf("the right password: %q, %v", done, err)
			}
			if pw != realPassword && (accounts.NamedIn(fmt.Sprint(err)) != "box" || stateOf(t, s).State != accounts.StateNeedsSignIn) {
				t.Fatalf("a wrong password: %v, %+v", err, stateOf(t, s))
			}
		}
	})

	t.Run("Implicit TLS without the CA is a permission failure", func(t *testing.T) {
		c := m.connector(t, func(cfg *Config) { cfg.IMAP, cfg.TLS, cfg.CAFile = m.imaps, TLSImplicit, "" })
		if _, err := c.Do(context.Background(), connectors.Call{Method: "search"}); connectors.ClassOf(err) != connectors.Permission {
			t.Fatalf("got %v", err)
		}
		c = m.connector(t, func(cfg *Config) { cfg.IMAP, cfg.TLS = m.imaps, TLSImplicit })
		do(t, c, "search", nil)
	})

	t.Run("Read, flag and move change the message and reconcile by re-reading it", func(t *testing.T) {
		c := m.connector(t, nil)
		if _, err := c.Do(context.Background(), sendCall("real-mut-1", map[string]any{"to": realUser, "subject": "Mutate me", "body": "x"})); err != nil {
			t.Fatal(err)
		}
		// Sent to ourselves, so it lands in a mailbox the test can change.
		id := m.awaitDelivery(t, "Mutate me")
		for _, step := range []struct {
			method string
			key    string
			want   bool
		}{{"markRead", "seen", true}, {"flag", "flagged", true}, {"unflag", "flagged", false}, {"markUnread", "seen", false}, {"markRead", "seen", true}} {
			call := connectors.Call{Method: step.method, Params: map[string]any{"id": id}, IdempotencyKey: "k"}
			res, err := c.Do(context.Background(), call)
			if err != nil {
				t.Fatalf("%s: %v", step.method, err)
			}
			if res.(map[string]any)[step.key] != step.want {
				t.Fatalf("%s: %v", step.method, res)
			}
			got := do(t, c, "get", map[string]any{"id": id})
			if got[step.key] != step.want {
				t.Fatalf("after %s: %s is %v", step.method, step.key, got[step.key])
			}
			if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
				t.Fatalf("reconcile %s: %v %v", step.method, v, err)
			}
		}
		// markUnread is now not what the message looks like.
		if v, _, _ := c.Reconcile(context.Background(), connectors.Call{Method: "markUnread", Params: map[string]any{"id": id}}); v != connectors.NotApplied {
			t.Fatalf("reconcile of a flag not set: %v", v)
		}
		if _, err := c.Do(context.Background(), connectors.Call{Method: "label", Params: map[string]any{"id": id, "add": "x"}}); connectors.ClassOf(err) != connectors.Logic ||
			!strings.Contains(err.Error(), "X-GM-EXT-1") {
			t.Fatalf("label on dovecot: %v", err)
		}
		move := connectors.Call{Method: "move", Params: map[string]any{"id": id, "to": "Archive"}, IdempotencyKey: "k"}
		if v, _, _ := c.Reconcile(context.Background(), move); v != connectors.NotApplied {
			t.Fatalf("reconcile before the move: %v", v)
		}
		res, err := c.Do(context.Background(), move)
		if err != nil {
			t.Fatal(err)
		}
		newID, _ := res.(map[string]any)["id"].(string)
		if !strings.HasPrefix(newID, "Archive:") {
			t.Fatalf("move result %v", res)
		}
		if got := do(t, c, "get", map[string]any{"id": newID}); got["subject"] != "Mutate me" || got["seen"] != true {
			t.Fatalf("moved message %v", got)
		}
		if v, _, err := c.Reconcile(context.Background(), move); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile after the move: %v %v", v, err)
		}
	})
}
