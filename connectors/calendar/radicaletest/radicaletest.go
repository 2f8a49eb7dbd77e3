// Package radicaletest starts Radicale, the CalDAV server from Debian's
// packages (.ci/servers/radicale.sh installs it), on loopback for tests: a
// free port, a temp storage dir, htpasswd auth with one user, and one
// calendar. Without the binary a test skips with the reason, unless the
// environment has CI=true, where it fails.
package radicaletest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a running Radicale.
type Server struct {
	Base     string // http://127.0.0.1:PORT/
	Calendar string // the calendar's path, /alice/work/, display name "Work"
	User     string
	Password string
}

// Start starts Radicale for t; it stops when t ends.
//
// Its port is one the kernel had free a moment before Radicale binds it,
// so another server started meanwhile may take it: starts in this process
// are one at a time, each server has a password of its own (a request
// answered by another's is refused, not taken for ours), and a server
// that could not bind, or is not the one answering, is started again on
// another port.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("radicale")
	if err != nil {
		msg := "radicale is not installed (run .ci/servers/radicale.sh): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	starting.Lock()
	defer starting.Unlock()
	var why string
	for range 5 {
		s, ok, out := start(t, bin)
		if ok {
			return s
		}
		why = out
	}
	t.Fatalf("radicale did not start as ours on a free port in five tries; the last said:\n%s", why)
	return nil
}

// starting makes this process's starts one at a time: a port chosen is
// bound by its server before the next start asks the kernel for one.
var starting sync.Mutex

// serial tells the servers' passwords apart.
var serial atomic.Int64

// start starts one Radicale and waits until it answers as ours, with its
// calendar made; ok false (and its output) when it exited, or another
// server answers on its port.
func start(t testing.TB, bin string) (*Server, bool, string) {
	t.Helper()
	dir := t.TempDir()
	s := &Server{User: "alice", Password: fmt.Sprintf("s3cret pass %d-%d", os.Getpid(), serial.Add(1)), Calendar: "/alice/work/"}
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(s.User+":"+s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	conf := fmt.Sprintf(`[server]
hosts = %s
[auth]
type = htpasswd
htpasswd_filename = %s
htpasswd_encryption = plain
delay = 0
[rights]
type = owner_only
[storage]
filesystem_folder = %s
[web]
type = none
[logging]
level = warning
`, addr, filepath.Join(dir, "users"), filepath.Join(dir, "collections"))
	confPath := filepath.Join(dir, "config")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd := exec.Command(bin, "--config", confPath)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	s.Base = "http://" + addr + "/"
	// Ready is when it makes our calendar: an answer over HTTP, with our
	// password, from ours. A server that dies or never answers fails the
	// test with its output instead of hanging it.
	deadline := time.After(30 * time.Second)
	for {
		code, err := s.request(http.MethodGet, "/"+s.User+"/", "")
		switch {
		case err == nil && code == http.StatusUnauthorized:
			stop() // another server's: ours could not bind, or is not up
			return nil, false, out.String()
		case err == nil:
			if code, err := s.request("MKCALENDAR", s.Calendar, mkcalendar); err != nil || code != http.StatusCreated {
				stop()
				t.Fatalf("MKCALENDAR %s: %d %v\n%s", s.Calendar, code, err, out.String())
			}
			t.Cleanup(stop)
			return s, true, ""
		}
		select {
		case <-exited:
			return nil, false, out.String()
		case <-deadline:
			stop()
			t.Fatalf("radicale did not answer on %s within 30s\n%s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const mkcalendar = `<?xml version="1.0" encoding="utf-8"?>
<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>
<D:displayname>Work</D:displayname>
<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>
</D:prop></D:set></C:mkcalendar>`

// request sends a raw request as the user and gives its status.
func (s *Server) request(method, path, body string) (int, error) {
	req, err := http.NewRequest(method, strings.TrimSuffix(s.Base, "/")+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(s.User, s.Password)
	if strings.HasSuffix(path, ".ics") {
		req.Header.Set("Content-Type", "text/calendar; charset=utf-8")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// syncBuffer is the server's output, written by its process's copier and
// read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Do sends a raw request as the user, the way another CalDAV client would,
// and fails t unless the answer has status want.
func (s *Server) Do(t testing.TB, method, path, body string, want int) {
	t.Helper()
	code, err := s.request(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("%s %s: %d, want %d", method, path, code, want)
	}
}

// Event is an iCalendar object with one VEVENT, as another client writes it.
func Event(uid, summary, start, end string, extra ...string) string {
	lines := []string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT",
		"UID:" + uid, "DTSTAMP:20261101T000000Z", "DTSTART" + start, "DTEND" + end, "SUMMARY:" + summary}
	lines = append(lines, extra...)
	lines = append(lines, "END:VEVENT", "END:VCALENDAR", "")
	return strings.Join(lines, "\r\n")
}

// Get reads path as the user, the way another CalDAV client would, and
// fails t unless it is there.
func (s *Server) Get(t testing.TB, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(s.Base, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(s.User, s.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, want 200", path, resp.StatusCode)
	}
	return string(b)
}
