package mail

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// rawSMTP is an SMTP server written line by line, so that it can answer as
// no library's server would.
type rawSMTP struct {
	// tls, when set, is offered with STARTTLS (and required)
	tls *tls.Config
	// inject is written in clear in the same write as STARTTLS's 220
	inject string
	// replies replaces the answer to a command (by its first word,
	// upper case; "." is the end of the message) with this writer's
	replies map[string]func(w io.Writer)

	mu       sync.Mutex
	messages int
}

func (s *rawSMTP) delivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messages
}

func (s *rawSMTP) serve(t *testing.T) string {
	t.Helper()
	return serveEach(t, s.session)
}

func (s *rawSMTP) session(c net.Conn) {
	defer func() { c.Close() }()
	r := bufio.NewReader(c)
	fmt.Fprintf(c, "220 raw ESMTP\r\n")
	secure := s.tls == nil
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		verb, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		verb = strings.ToUpper(verb)
		if reply := s.replies[verb]; reply != nil {
			reply(c)
			continue
		}
		switch verb {
		case "EHLO":
			ext := "AUTH PLAIN"
			if !secure {
				ext = "STARTTLS"
			}
			fmt.Fprintf(c, "250-raw\r\n250 %s\r\n", ext)
		case "STARTTLS":
			if _, err := c.Write([]byte("220 go ahead\r\n" + s.inject)); err != nil {
				return
			}
			tc := tls.Server(c, s.tls)
			if err := tc.Handshake(); err != nil {
				return
			}
			c, r, secure = tc, bufio.NewReader(tc), true
		case "AUTH":
			if !strings.Contains(line, "PLAIN") {
				fmt.Fprintf(c, "504 PLAIN only\r\n")
				continue
			}
			fmt.Fprintf(c, "235 ok\r\n")
		case "MAIL", "RCPT":
			fmt.Fprintf(c, "250 ok\r\n")
		case "DATA":
			fmt.Fprintf(c, "354 go on\r\n")
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
			}
			if reply := s.replies["."]; reply != nil {
				reply(c)
				continue
			}
			s.mu.Lock()
			s.messages++
			s.mu.Unlock()
			fmt.Fprintf(c, "250 queued\r\n")
		case "QUIT":
			fmt.Fprintf(c, "221 bye\r\n")
			return
		default:
			fmt.Fprintf(c, "500 what\r\n")
		}
	}
}

// endless writes a multi-line reply of about size bytes that never ends
// (no last line), then waits for the client to hang up.
func endless(size int) func(w io.Writer) {
	line := "250-" + strings.Repeat("x", 996) + "\r\n"
	return func(w io.Writer) {
		for n := 0; n < size; n += len(line) {
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
		if c, ok := w.(net.Conn); ok {
			_, _ = io.Copy(io.Discard, c)
		}
	}
}
