package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullFrames are frames with every field of the envelope set, as each op
// carries them.
func fullFrames() []*frame {
	lim := DefaultLimits()
	lim.MaxMemory = 1 << 40
	lim.WallTime = -3 * time.Second // signed fields stay signed
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	return []*frame{
		{Op: opLoad, Key: "k1", Script: &wireLoad{File: "w.js", Source: []byte("export default {}\x00\xff"),
			Opts: LoadOptions{MinInterval: time.Minute, Sources: map[string][]string{"files": {"file"}}}}},
		{Op: opRun, Key: "k2", Inv: &wireInv{Handler: "c", Phase: PhasePrepare, State: json.RawMessage(`{"s":1}`),
			Prepared: json.RawMessage(`null`), MutationResult: json.RawMessage(`{"status":"none"}`), Limits: lim,
			Prefetched: map[string][]Event{"a": {{MessageID: "m1", Payload: json.RawMessage(`{"x":"<é>"}`), CreatedAt: at}}, "b": {}},
			Then:       &wireInv{Handler: "c", Phase: PhaseMutate, Limits: DefaultLimits()}}},
		{Op: opStarted},
		{Op: opCall, Name: callPublish, Args: json.RawMessage(`{"topics":["a"]}`), Deadline: at.UnixNano(),
			Told: []toldCall{{Input: &InputRequest{Source: "files", Type: "file", ID: "a:b", Title: "<é>"}},
				{Pub: publishArgs{Topics: []string{"a", "b"}, MessageID: "m", InputID: "i", Payload: json.RawMessage(`[1,2]`)}},
				{Pub: publishArgs{Topics: []string{}, MessageID: "n"}}}},
		{Op: opReply, Result: json.RawMessage(`"ok"`)},
		{Op: opReply, Err: &wireErr{Text: "boom", Host: 2, Cause: causeCanceled, Script: &Error{Kind: ErrLogic, Message: "m", Line: 3}}},
		{Op: opLog, Args: json.RawMessage(`{"level":"info","line":"hi"}`)},
		{Op: opPrepared, Outcome: &wireOutcome{Prepare: &wirePrepare{Reservations: []Reservation{{Topic: "a", IDs: []string{"m1"}}, {Topic: "b", IDs: []string{}}},
			UITitle: "t", WakeAt: "2026-01-01T00:00:00Z", Raw: json.RawMessage(`{"reservations":[],"data":null}`)}}},
		{Op: opDone, Outcome: &wireOutcome{State: json.RawMessage(`3`), StateReturned: true,
			Mutation: &MutationCall{Connector: "http", Method: "post", Params: map[string]any{"url": "http://x", "n": float64(2), "b": map[string]any{"c": []any{true, nil}}}}},
			Told: []toldCall{{Pub: publishArgs{Topics: []string{"x"}, MessageID: "m"}}}, Retire: true},
		{Op: opDone, Missing: true, Err: &wireErr{Text: "no script", Validation: []Diagnostic{{File: "w.js", Message: "bad"}}}},
		{Op: opDone, Loaded: &wireScript{Workflow: Workflow{Name: "w"}, Capabilities: []string{"http.post"},
			Handlers: map[string]wireDecl{"c": {Consumer: true, Subscribe: []string{"a"}, At: map[string][2]int{"x": {1, 2}}}}}},
	}
}

// fromHost says whether f has a field only the host sends.
func fromHost(f *frame) bool {
	return f.Key != "" || f.Script != nil || f.Inv != nil || f.Result != nil
}

func encodeBody(t testing.TB, f *frame) []byte {
	t.Helper()
	b, err := appendFrame(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFramesRoundTrip: every field of every frame comes back as it went,
// through the pipe's writer and reader, checked or not.
func TestFramesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range fullFrames() {
		var pipe bytes.Buffer
		w := bufio.NewWriter(&pipe)
		if err := writeFrame(w, f); err != nil {
			t.Fatalf("%s: %v", f.Op, err)
		}
		if err := writeFrame(w, f); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(&pipe)
		reads := []func(*bufio.Reader) (*frame, error){readFrame, readHostFrame}
		if fromHost(f) {
			// a worker's frame with these is refused (below)
			reads = []func(*bufio.Reader) (*frame, error){readHostFrame, readHostFrame}
		}
		for _, read := range reads {
			got, err := read(r)
			if err != nil {
				t.Fatalf("%s: %v", f.Op, err)
			}
			if !reflect.DeepEqual(got, f) {
				t.Errorf("%s frame came back as\n%#v\nnot\n%#v", f.Op, got, f)
				if f.Inv != nil && got.Inv != nil {
					t.Errorf("inv %#v\nnot %#v", *got.Inv, *f.Inv)
				}
				if f.Outcome != nil && got.Outcome != nil {
					t.Errorf("outcome %#v\nnot %#v", *got.Outcome, *f.Outcome)
				}
			}
		}
	}
}

// TestFrameLimitsCoverEveryField: a field added to Limits and not to the
// wire would reach the worker as zero.
func TestFrameLimitsCoverEveryField(t *testing.T) {
	t.Parallel()
	var lim Limits
	v := reflect.ValueOf(&lim).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Int, reflect.Int64:
			fv.SetInt(int64(1000 + i))
		case reflect.Uint64:
			fv.SetUint(uint64(1<<50 + i))
		default:
			t.Fatalf("Limits.%s is a %s: the wire (framecodec.go) knows ints only", v.Type().Field(i).Name, fv.Kind())
		}
	}
	if n := len(limitsOf(&lim)); n != v.NumField() {
		t.Fatalf("limitsOf lists %d fields, Limits has %d", n, v.NumField())
	}
	var back Limits
	setLimits(&back, limitsOf(&lim))
	if back != lim {
		t.Fatalf("limits came back as %+v, not %+v", back, lim)
	}
}

// TestMalformedFramesAreRefused: a worker's frame that is cut short, lies
// about a length or a count, carries what is not JSON where JSON goes, or
// nests deeper than the protocol is refused with an error naming the frame,
// and nothing panics or allocates what the frame does not hold.
func TestMalformedFramesAreRefused(t *testing.T) {
	t.Parallel()
	for _, f := range fullFrames() {
		body := encodeBody(t, f)
		for cut := range len(body) {
			// a cut may fall between two fields of the frame: then it is
			// a frame of fewer fields, which encodes to the cut again
			g, err := decodeFrame(body[:cut], !fromHost(f))
			if err == nil && len(encodeBody(t, g)) != cut {
				t.Errorf("%s frame cut at %d of %d bytes decoded to a frame of other fields", f.Op, cut, len(body))
			}
		}
	}
	huge := binary.AppendUvarint(nil, 1<<62)
	state := func(raw string) []byte {
		return append([]byte{8, fOutcome, oState, byte(len(raw))}, append([]byte(raw), 0)...)
	}
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "an empty frame"},
		{"unknown op", []byte{99}, "unknown op 99"},
		{"unknown field", []byte{8, 77}, `malformed "done" frame: frame at byte 2: unknown field 77`},
		{"length past the end", append([]byte{8, fName}, huge...), `malformed "done" frame: name`},
		{"count past the end", append([]byte{8, fTold}, huge...), `malformed "done" frame: told`},
		{"reservations past the end", append([]byte{7, fOutcome, oPrepare, pReservations}, huge...), "outcome.prepare.reservations"},
		{"state not JSON", state(`{"a":`), `malformed "done" frame: outcome.state at byte 9: not JSON`},
		{"bad varint", []byte{4, fDeadline, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "deadline"},
		{"more elements than the bytes left hold", append([]byte{8, fTold, 10}, make([]byte, 10)...), "10 elements, with 10 bytes left"},
		{"a job from a worker", []byte{8, fInv, 0}, `malformed "done" frame: frame at byte 2: field 3, which only the host sends`},
		{"a result from a worker", []byte{5, fResult, 1, '1'}, "which only the host sends"},
		{"then in a then", []byte{2, fInv, iThen, iThen, 0, 0, 0}, "a then inside a then"},
		{"params not JSON", []byte{8, fOutcome, oMutation, mParams, 1, '{', 0, 0}, "outcome.mutation.params"},
		{"frame over the bound", nil, "over"},
	}
	for _, c := range cases {
		var err error
		if c.name == "then in a then" {
			_, err = readHostFrame(bufio.NewReader(bytes.NewReader(withLength(c.body))))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v, want %q", c.name, err, c.want)
			}
			continue
		}
		if c.name == "frame over the bound" {
			var n [4]byte
			binary.BigEndian.PutUint32(n[:], maxFrame+1)
			_, err = readFrame(bufio.NewReader(bytes.NewReader(n[:])))
		} else {
			_, err = readFrame(bufio.NewReader(bytes.NewReader(withLength(c.body))))
		}
		var bad *malformedFrame
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a malformed frame saying %q", c.name, err, c.want)
		}
	}
	// and bytes flipped at random anywhere in real frames: an error or a
	// frame, never a panic
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, f := range fullFrames() {
		body := encodeBody(t, f)
		for range 2000 {
			b := bytes.Clone(body)
			for range 1 + rnd.IntN(3) {
				b[rnd.IntN(len(b))] = byte(rnd.Uint32())
			}
			_, _ = decodeFrame(b, !fromHost(f))
		}
	}
}

func withLength(body []byte) []byte {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	return append(n[:], body...)
}

// TestFromAWorkerStringsAreUTF8: a worker's string that is not UTF-8 is
// made so before the host keeps it, as JSON did.
func TestFromAWorkerStringsAreUTF8(t *testing.T) {
	t.Parallel()
	body := encodeBody(t, &frame{Op: opCall, Name: "re\xffad"})
	f, err := decodeFrame(body, true)
	if err != nil || f.Name != "re\uFFFDad" {
		t.Fatalf("got %q, %v", f.Name, err)
	}
}

// TestAMalformedFrameFailsTheRun: a worker that writes what is not a frame
// fails its run with an error that names the frame, and is killed; the
// host goes on.
func TestAMalformedFrameFailsTheRun(t *testing.T) {
	// an odd memory limit: this test's worker is the only one with it
	const limit = 3<<20 + 7
	toChild, fromHost, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toHost, fromChild, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// a "done" frame whose outcome's state is not JSON, then silence
	body := withLength([]byte{8, fOutcome, oState, 2, '{', '"', 0})
	cmd := exec.Command("sh", "-c", `cat <&3 >/dev/null & printf "$1" >&4; exec sleep 30`, "sh", printfEscape(body))
	cmd.ExtraFiles = []*os.File{toChild, fromChild}
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh to play a worker: %v", err)
	}
	toChild.Close()
	fromChild.Close()
	w := &worker{cmd: cmd, limit: limit, exited: make(chan struct{}), known: map[string]bool{}, wfile: fromHost, rfile: toHost,
		w: bufio.NewWriter(fromHost), r: bufio.NewReader(toHost)}
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	procs.mu.Lock()
	procs.idle[limit] = append(procs.idle[limit], w)
	procs.mu.Unlock()
	lim := testLimits()
	f := &frame{Op: opRun, Key: "k", Inv: &wireInv{Handler: "c", Phase: PhaseMutate, Limits: lim}}
	_, _, err = converse(context.Background(), f, nil, lim, limit, hostSide{h: &recordingHost{}, hostErrs: &hostErrors{}, wall: lim.WallTime})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(err.Error(), `a malformed "done" frame: outcome.state`) {
		t.Fatalf("got %v, want a resource error naming the malformed done frame", err)
	}
	select {
	case <-w.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker that sent it was not killed")
	}
}

// printfEscape writes b as a printf(1) format of octal escapes.
func printfEscape(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteString("\\")
		s.WriteString(string([]byte{'0' + c>>6, '0' + c>>3&7, '0' + c&7}))
	}
	return s.String()
}

// BenchmarkFrames is the frames of one item on the files→http row, each
// written and read back: the job (a prepare with its prefetch and its
// mutate), the prepared outcome, the mutation's outcome.
func BenchmarkFrames(b *testing.B) {
	lim := DefaultLimits()
	at := time.Now()
	job := &frame{Op: opRun, Key: "0123456789abcdef0123456789abcdef", Inv: &wireInv{Handler: "post", Phase: PhasePrepare, Limits: lim,
		Prefetched: map[string][]Event{"file.arrived": {{MessageID: "files:inbox/f123.txt", Payload: json.RawMessage(`{"path":"inbox/f123.txt","name":"f123.txt","size":12,"mtime":"2026-01-01T00:00:00Z"}`), CreatedAt: at}}},
		Then:       &wireInv{Handler: "post", Phase: PhaseMutate, Limits: lim}}}
	raw := json.RawMessage(`{"reservations":[{"topic":"file.arrived","ids":["files:inbox/f123.txt"]}],"data":{"path":"inbox/f123.txt","name":"f123.txt"}}`)
	prepared := &frame{Op: opPrepared, Outcome: &wireOutcome{Prepare: &wirePrepare{Reservations: []Reservation{{Topic: "file.arrived", IDs: []string{"files:inbox/f123.txt"}}}, Raw: raw}}}
	done := &frame{Op: opDone, Outcome: &wireOutcome{Mutation: &MutationCall{Connector: "http", Method: "post",
		Params: map[string]any{"url": "http://127.0.0.1:8080/sink", "json": map[string]any{"path": "inbox/f123.txt", "name": "f123.txt"}}}}}
	var pipe bytes.Buffer
	w := bufio.NewWriterSize(&pipe, 64<<10)
	r := bufio.NewReaderSize(&pipe, 64<<10)
	for b.Loop() {
		for _, f := range []*frame{job, prepared, done} {
			if err := writeFrame(w, f); err != nil {
				b.Fatal(err)
			}
			read := readFrame
			if fromHost(f) {
				read = readHostFrame
			}
			if _, err := read(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
