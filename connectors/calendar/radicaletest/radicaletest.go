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
	dir := t.TempDir()
	s := &Server{User: "alice", Password: "s3cret pass", Calendar: "/alice/work/"}
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
	var out bytes.Buffer
	cmd := exec.Command(bin, "--config", confPath)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	s.Base = "http://" + addr + "/"
	// A server that dies or never listens fails the test with its output
	// instead of hanging it.
	deadline := time.After(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("radicale exited: %v\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("radicale did not listen on %s within 30s\n%s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.Do(t, "MKCALENDAR", s.Calendar, `<?xml version="1.0" encoding="utf-8"?>
<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>
<D:displayname>Work</D:displayname>
<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>
</D:prop></D:set></C:mkcalendar>`, http.StatusCreated)
	return s
}

// Do sends a raw request as the user, the way another CalDAV client would,
// and fails t unless the answer has status want.
func (s *Server) Do(t testing.TB, method, path, body string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(s.Base, "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(s.User, s.Password)
	if strings.HasSuffix(path, ".ics") {
		req.Header.Set("Content-Type", "text/calendar; charset=utf-8")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
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
