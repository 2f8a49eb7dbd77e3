package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Over streamable HTTP a call's answer is one JSON body, or SSE events
// whose "data:" lines hold the messages. answerCap bounds every line of it
// as frameCap bounds a stdio server's (stdio.go): a line is held until it
// is whole, and one over MaxMessage is not handed on; in its place comes a
// JSON-RPC error for the request's id, so that call fails alone and the
// SDK never holds the oversized answer.

type answerCap struct {
	base http.RoundTripper
	c    *Connector
}

func (c *Connector) cappingAnswers(base http.RoundTripper) http.RoundTripper {
	return &answerCap{base: base, c: c}
}

func (a *answerCap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.Body == nil {
		return resp, err
	}
	id := requestID(req)
	if id == "" {
		return resp, nil // a notification: nothing answers it
	}
	resp.Body = &lineCap{
		r: bufio.NewReaderSize(resp.Body, 64<<10), body: resp.Body, max: a.c.cfg.MaxMessage, id: id,
		sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		log: a.c.log.Warn,
	}
	return resp, nil
}

// requestID is the raw JSON id of the request req sends, "" when it has
// none or its body cannot be read again.
func requestID(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return ""
	}
	return string(msg.ID)
}

// lineCap hands on whole lines of at most max bytes each.
type lineCap struct {
	r    *bufio.Reader
	body io.Closer
	max  int
	id   string
	sse  bool
	log  func(msg string, args ...any)

	out  []byte
	line []byte
}

func (l *lineCap) Close() error { return l.body.Close() }

func (l *lineCap) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if err := l.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// next reads one line into out, or the error in place of an oversized one.
func (l *lineCap) next() error {
	l.line = l.line[:0]
	size, over := 0, false
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += len(chunk)
		if size > l.max {
			over = true
			l.line = l.line[:0]
		} else {
			l.line = append(l.line, chunk...)
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(l.line) > 0 && !over:
			l.hand() // the last line, without its newline
			return nil
		case over && err == io.EOF:
		default:
			return err
		}
		break
	}
	if !over {
		l.hand()
		return nil
	}
	l.log("an answer over the size limit fails its call", "bytes", size, "limit", l.max, "id", l.id)
	l.fail(l.id, fmt.Sprintf("the answer of %d bytes is over keep's limit of %d bytes; ask for less", size, l.max))
	return nil
}

// hand puts the line read in out, or what goes in its place (deep).
func (l *lineCap) hand() {
	l.out = l.line
	if l.deep() {
		l.log("a message nested deeper than keep reads is not handed on", "bytes", len(l.line), "id", l.id, "answered", len(l.out) > 0)
	}
}

// deep says whether the line in l.line is a message nested deeper than the
// SDK reads, and then puts in out what goes in its place. The SDK fails
// its reading of such a message and ends the session on it, every call in
// flight with it, as over stdio (frameCap): an answer to a call (in a JSON
// body, always the body's request's) is replaced by an error for that
// call alone, anything else is dropped.
func (l *lineCap) deep() bool {
	payload := l.line
	if l.sse {
		rest, ok := bytes.CutPrefix(payload, []byte("data:"))
		if !ok {
			return false // an event's id, name or retry: no message
		}
		payload = rest
	}
	if !tooDeep(payload) {
		return false
	}
	l.out = nil
	msg := fmt.Sprintf("the answer of %d bytes nests deeper than keep reads (%d levels)", len(payload), sdkMaxDepth)
	if !l.sse {
		l.fail(l.id, msg)
		return true
	}
	var scan topLevel
	scan.feed(payload)
	if id := scan.id; id != "" && !scan.method && json.Valid([]byte(id)) && strings.IndexByte("\"-0123456789", id[0]) >= 0 {
		l.fail(id, msg)
	}
	return true
}

// fail puts in out a JSON-RPC error answering id with msg, in place of
// what the server sent.
func (l *lineCap) fail(id, msg string) {
	var b bytes.Buffer
	if l.sse {
		b.WriteString("data: ")
	}
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, codeTooLarge, strconv.Quote(msg))
	if l.sse {
		b.WriteString("\n") // the event ends
	}
	l.out = b.Bytes()
}
