package mcp

import (
	"bytes"
	"io"
	"net/http"
)

// Over streamable HTTP the tools/list answer comes as one JSON body or as
// an SSE event whose data line holds it; the SDK drops taskSupport from
// either, so keep reads the body as the SDK reads it, line by line, and
// hands each message to sniffTasks as the stdio transport does (for the
// answers to tools/list only). The
// request and the response pass unchanged; a line longer than MaxMessage
// is not looked at (the SDK refuses or reads it as it would anyway).

// taskSniffer reads the answers of the requests base sends.
type taskSniffer struct {
	base http.RoundTripper
	c    *Connector
}

func (c *Connector) sniffingTasks(base http.RoundTripper) http.RoundTripper {
	return &taskSniffer{base: base, c: c}
}

func (s *taskSniffer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.Body == nil || !listsTools(req) {
		return resp, err
	}
	resp.Body = &lineTee{r: resp.Body, max: s.c.cfg.MaxMessage, onLine: s.c.sniffTasks}
	return resp, nil
}

// listsTools: req may be a tools/list (only those answers are read, so a
// tool's result is not held twice); a body that cannot be read again is.
func listsTools(req *http.Request) bool {
	if req.GetBody == nil {
		return true
	}
	body, err := req.GetBody()
	if err != nil {
		return true
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	return err != nil || bytes.Contains(b, []byte(`"tools/list"`))
}

// lineTee passes a body through and shows each line of it, with an SSE
// "data:" prefix taken off, to onLine; the last line at the end of the body.
type lineTee struct {
	r      io.ReadCloser
	max    int
	onLine func([]byte)
	line   []byte
	over   bool // the current line outgrew max: skipped to its end
}

func (t *lineTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.add(b)
			break
		}
		t.add(b[:i])
		t.flush()
		b = b[i+1:]
	}
	if err == io.EOF {
		t.flush()
	}
	return n, err
}

func (t *lineTee) add(b []byte) {
	if t.over {
		return
	}
	if len(t.line)+len(b) > t.max {
		t.over, t.line = true, nil
		return
	}
	t.line = append(t.line, b...)
}

func (t *lineTee) flush() {
	line := bytes.TrimSpace(t.line)
	if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		line = bytes.TrimSpace(data)
	}
	if !t.over && len(line) > 0 {
		t.onLine(line)
	}
	t.line, t.over = t.line[:0], false
}

func (t *lineTee) Close() error { return t.r.Close() }
