package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"keep/connectors/childproc"
)

// codeTooLarge is the JSON-RPC error keep puts in place of an answer over
// the size limit: the call it answers fails, the session goes on. The SDK's
// own stdio transport ends the whole session on such a line, failing every
// other call in flight with it.
const codeTooLarge = -32099

// stdioTransport starts a stdio server as the SDK's CommandTransport does,
// but reads its output through frameCap, so one oversized answer fails only
// its own call.
type stdioTransport struct {
	cmd        *exec.Cmd
	terminate  time.Duration // after closing stdin, before SIGTERM (and SIGKILL)
	maxMessage int
	log        func(msg string, args ...any)
	onLine     func(line []byte) // sees each message that fits (tasks.go)
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// what the server leaves holding its stderr (a child it started) does
	// not hold up its end (procStdin.Close) past the grace period
	t.cmd.WaitDelay = t.terminate
	if err := startServer(t.cmd); err != nil {
		return nil, err
	}
	fc := &frameCap{r: bufio.NewReaderSize(stdout, 64<<10), max: t.maxMessage, log: t.log, onLine: t.onLine}
	io := &sdk.IOTransport{Reader: nopCloser{fc}, Writer: &procStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		MaxLineLength: -1} // frameCap bounds every line
	return io.Connect(ctx)
}

type nopCloser struct{ io.Reader }

// Close leaves stdout open: the session ends by closing stdin (the MCP
// stdio shutdown), and the server's exit closes stdout.
func (nopCloser) Close() error { return nil }

// procStdin is the server's stdin; closing it stops the server as the MCP
// spec's stdio shutdown says: close its input, wait, SIGTERM, wait, SIGKILL,
// each signal to its process group; what the server leaves of the group
// when it exits is stopped too (procgroup_unix.go).
type procStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (p *procStdin) Close() error {
	if err := p.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			sweepGroup(p.cmd.Process, p.terminate)
			if errors.Is(err, exec.ErrWaitDelay) {
				err = nil // it exited; what held its stderr is swept
			}
			return err, true
		case <-time.After(p.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if groupSignal(p.cmd.Process, syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := groupSignal(p.cmd.Process, syscall.SIGKILL); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server does not exit")
}

// frameCap passes the server's newline-delimited messages through, up to
// max bytes each. A longer line is read to its end without being kept; an
// answer (it has an id and no method) is replaced by a JSON-RPC error for
// the same id, anything else is dropped and logged.
type frameCap struct {
	r      *bufio.Reader
	max    int
	log    func(msg string, args ...any)
	onLine func(line []byte)

	out  []byte // what Read hands on next
	line []byte
	scan topLevel
}

func (f *frameCap) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next reads one line into out.
func (f *frameCap) next() error {
	f.line = f.line[:0]
	f.scan = topLevel{}
	size, over := 0, false
	for {
		chunk, err := f.r.ReadSlice('\n')
		size += len(chunk)
		switch {
		case over:
			f.scan.feed(chunk)
		case size > f.max:
			// from here the line is only followed, never kept
			over = true
			f.scan.feed(f.line)
			f.scan.feed(chunk)
			f.line = f.line[:0]
		default:
			f.line = append(f.line, chunk...)
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(f.line) > 0 && !over && readable(f.line):
			f.out = f.line // the last line, without its newline
			return nil
		default:
			return err
		}
		break
	}
	if !over {
		if !readable(f.line) {
			f.scan.feed(f.line)
			if id := f.scan.id; id != "" && !f.scan.method && json.Valid([]byte(id)) && strings.IndexByte("\"-0123456789", id[0]) >= 0 {
				// an answer keep cannot read (nested deeper than a JSON
				// reader follows, or torn inside): it fails its call now,
				// as an oversized one does, rather than at its timeout
				f.log("an answer that is no JSON keep can read fails its call", "bytes", len(f.line), "id", f.scan.id)
				f.out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", f.scan.id, codeTooLarge,
					strconv.Quote(fmt.Sprintf("the answer of %d bytes is no JSON keep can read (nested too deep, or malformed)", len(f.line))))
				return nil
			}
			// no message at all (a server's debug print on stdout, a
			// torn line): the SDK would end the session on it, failing
			// every call in flight; a call it was meant to answer
			// times out as it would without it
			f.log("dropped a line from the server that is no JSON", "bytes", len(f.line), "line", clip(string(bytes.TrimSpace(f.line)), 200))
			return nil
		}
		f.out = f.line
		if f.onLine != nil {
			f.onLine(f.line)
		}
		return nil
	}
	if f.scan.id == "" || f.scan.method {
		f.log("dropped a message from the server over the size limit", "bytes", size, "limit", f.max)
		return nil
	}
	f.log("an answer over the size limit fails its call", "bytes", size, "limit", f.max, "id", f.scan.id)
	msg := fmt.Sprintf("the answer of %d bytes is over keep's limit of %d bytes; ask for less", size, f.max)
	f.out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", f.scan.id, codeTooLarge, strconv.Quote(msg))
	return nil
}

// sdkMaxDepth is the deepest nesting the SDK's JSON reader takes
// (go-sdk internal/json): a message nested deeper, valid JSON or not,
// fails its reading, and the SDK ends the session on it, every call in
// flight with it.
const sdkMaxDepth = 1000

// readable says whether the SDK can read b as a message.
func readable(b []byte) bool { return json.Valid(b) && !tooDeep(b) }

// tooDeep says whether b nests objects and arrays deeper than the SDK
// reads.
func tooDeep(b []byte) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > sdkMaxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// topLevel follows one JSON object a byte at a time, keeping only what
// frameCap needs of its top level: the id's raw value (when short) and
// whether it has a method.
type topLevel struct {
	depth   int
	inStr   bool
	esc     bool
	key     []byte // the top-level string being read, when it may be a key
	keyDone string // the last top-level key read
	inValue bool   // after a top-level colon, before the comma
	idRaw   []byte
	id      string
	method  bool
}

func (s *topLevel) feed(b []byte) {
	for _, c := range b {
		s.byte(c)
	}
}

func (s *topLevel) byte(c byte) {
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			if s.depth == 1 && !s.inValue {
				s.keyDone = string(s.key)
			}
		}
		if s.depth == 1 && !s.inValue && s.inStr && len(s.key) < 16 {
			s.key = append(s.key, c)
		}
		s.idByte(c)
		return
	}
	switch c {
	case '"':
		s.inStr = true
		if s.depth == 1 && !s.inValue {
			s.key = s.key[:0]
		}
	case '{', '[':
		s.depth++
	case '}', ']':
		if s.depth == 1 {
			s.endValue()
		}
		s.depth--
		return
	case ':':
		if s.depth == 1 {
			s.inValue = true
			if s.keyDone == "method" {
				s.method = true
			}
			return
		}
	case ',':
		if s.depth == 1 {
			s.endValue()
			return
		}
	}
	s.idByte(c)
}

// idByte keeps a byte of the id's value.
func (s *topLevel) idByte(c byte) {
	if s.depth >= 1 && s.inValue && s.keyDone == "id" && len(s.idRaw) <= 64 {
		if len(s.idRaw) > 0 || (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
			s.idRaw = append(s.idRaw, c)
		}
	}
}

func (s *topLevel) endValue() {
	if s.inValue && s.keyDone == "id" && len(s.idRaw) > 0 && len(s.idRaw) <= 64 {
		s.id = string(trimSpace(s.idRaw))
	}
	s.inValue, s.keyDone, s.idRaw = false, "", s.idRaw[:0]
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// servers starts stdio servers so that none outlives keep: on Linux the
// kernel kills one whose keep died, even a server deaf to the end of its
// input.
var servers = childproc.New(nil)
