package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A frame's body is binary, not JSON: each frame crosses the pipe and is
// read back for every job, call and outcome, and encoding/json spent its
// time in reflection over the envelope and in scanning payloads twice (to
// check them, then to copy them) that are only handed along. Here the
// envelope is fields by tag and JSON payloads are length-prefixed bytes,
// taken as they are. What is rare and rich (a script to load, what a load
// found, an error) stays JSON inside its field.
//
// The body is the op's code, then fields: a tag byte and the field's value.
// A nested struct (a job's invocation, an outcome) is fields ended by tag 0;
// the frame ends where its length says. Strings and bytes are a uvarint
// length and the bytes; numbers are varints; a flag is its tag alone.
//
// A worker's frames are written by a process that runs an adversary's
// script, so a frame read by the host is decoded as input: every length
// and count is checked against the bytes left before anything is
// allocated, nesting is fixed (one "then" deep), JSON payloads must be
// JSON, strings are made valid UTF-8, and anything else is refused with an
// error naming the frame and the field.

var opCodes = [...]op{1: opLoad, 2: opRun, 3: opStarted, 4: opCall, 5: opReply, 6: opLog, 7: opPrepared, 8: opDone}

func opCode(o op) byte {
	for i, c := range opCodes {
		if i > 0 && c == o {
			return byte(i)
		}
	}
	return 0
}

// The fields of a frame, and of each struct in it, by tag. Tag 0 ends a
// nested struct.
const (
	fKey byte = 1 + iota
	fScript
	fInv
	fName
	fArgs
	fResult
	fDeadline
	fTold
	fOutcome
	fLoaded
	fErr
	fRetire
	fMissing
)

const (
	lFile byte = 1 + iota
	lSource
	lOpts
)

const (
	iHandler byte = 1 + iota
	iPhase
	iState
	iPrepared
	iMutationResult
	iLimits
	iPrefetched
	iThen
)

const (
	oState byte = 1 + iota
	oStateReturned
	oPrepare
	oMutation
)

const (
	pReservations byte = 1 + iota
	pUITitle
	pWakeAt
	pRaw
)

const (
	mConnector byte = 1 + iota
	mMethod
	mParams
)

// appendFrame appends f's body to b.
func appendFrame(b []byte, f *frame) ([]byte, error) {
	c := opCode(f.Op)
	if c == 0 {
		return b, fmt.Errorf("sandbox: encode a frame: unknown op %q", f.Op)
	}
	b = append(b, c)
	b = appendStr(b, fKey, f.Key)
	if s := f.Script; s != nil {
		b = append(b, fScript)
		b = appendStr(b, lFile, s.File)
		b = appendBytes(b, lSource, s.Source)
		opts, err := json.Marshal(s.Opts)
		if err != nil {
			return b, fmt.Errorf("sandbox: encode a %s frame's load options: %w", f.Op, err)
		}
		b = appendBytes(b, lOpts, opts)
		b = append(b, 0)
	}
	if f.Inv != nil {
		b = append(b, fInv)
		b = appendInv(b, f.Inv)
	}
	b = appendStr(b, fName, string(f.Name))
	b = appendBytes(b, fArgs, f.Args)
	b = appendBytes(b, fResult, f.Result)
	if f.Deadline != 0 {
		b = binary.AppendVarint(append(b, fDeadline), f.Deadline)
	}
	if len(f.Told) > 0 {
		b = binary.AppendUvarint(append(b, fTold), uint64(len(f.Told)))
		for _, t := range f.Told {
			if in := t.Input; in != nil {
				b = append(b, toldRegister)
				b = appendLen(b, in.Source)
				b = appendLen(b, in.Type)
				b = appendLen(b, in.ID)
				b = appendLen(b, in.Title)
				continue
			}
			b = append(b, toldPublish)
			b = appendStrs(b, t.Pub.Topics)
			b = appendLen(b, t.Pub.MessageID)
			b = appendLen(b, t.Pub.InputID)
			b = appendLen(b, t.Pub.Payload)
		}
	}
	if o := f.Outcome; o != nil {
		var err error
		if b, err = appendOutcome(append(b, fOutcome), o); err != nil {
			return b, fmt.Errorf("sandbox: encode a %s frame's outcome: %w", f.Op, err)
		}
	}
	for _, j := range []struct {
		tag byte
		v   any
		nil bool
	}{{fLoaded, f.Loaded, f.Loaded == nil}, {fErr, f.Err, f.Err == nil}} {
		if j.nil {
			continue
		}
		raw, err := json.Marshal(j.v)
		if err != nil {
			return b, fmt.Errorf("sandbox: encode a %s frame: %w", f.Op, err)
		}
		b = appendBytes(b, j.tag, raw)
	}
	if f.Retire {
		b = append(b, fRetire)
	}
	if f.Missing {
		b = append(b, fMissing)
	}
	return b, nil
}

func appendInv(b []byte, inv *wireInv) []byte {
	b = appendStr(b, iHandler, inv.Handler)
	b = appendStr(b, iPhase, string(inv.Phase))
	b = appendBytes(b, iState, inv.State)
	b = appendBytes(b, iPrepared, inv.Prepared)
	b = appendBytes(b, iMutationResult, inv.MutationResult)
	b = appendLimits(append(b, iLimits), &inv.Limits)
	if len(inv.Prefetched) > 0 {
		b = binary.AppendUvarint(append(b, iPrefetched), uint64(len(inv.Prefetched)))
		for topic, evs := range inv.Prefetched {
			b = appendLen(b, topic)
			b = binary.AppendUvarint(b, uint64(len(evs)))
			for _, e := range evs {
				b = appendLen(b, e.MessageID)
				b = appendLen(b, e.Payload)
				b = binary.AppendVarint(b, e.CreatedAt.Unix())
				b = binary.AppendUvarint(b, uint64(e.CreatedAt.Nanosecond()))
			}
		}
	}
	if inv.Then != nil {
		b = appendInv(append(b, iThen), inv.Then)
	}
	return append(b, 0)
}

// appendLimits writes every field of Limits in order, as limitsOf lists
// them and setLimits reads them back (a test holds the three to the struct).
func appendLimits(b []byte, l *Limits) []byte {
	for _, v := range limitsOf(l) {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func limitsOf(l *Limits) [15]int64 {
	return [15]int64{int64(l.WallTime), int64(l.MaxStackDepth), int64(l.MaxHeapGrowth), int64(l.MaxMemory),
		int64(l.MaxState), int64(l.MaxPayload), int64(l.MaxData), int64(l.MaxResult), int64(l.MaxParams),
		int64(l.MaxField), int64(l.MaxLogLine), int64(l.MaxLogLines), int64(l.MaxLogBytes), int64(l.MaxPeek),
		int64(l.DefaultPeek)}
}

func setLimits(l *Limits, v [15]int64) {
	*l = Limits{WallTime: time.Duration(v[0]), MaxStackDepth: int(v[1]), MaxHeapGrowth: uint64(v[2]), MaxMemory: uint64(v[3]),
		MaxState: int(v[4]), MaxPayload: int(v[5]), MaxData: int(v[6]), MaxResult: int(v[7]), MaxParams: int(v[8]),
		MaxField: int(v[9]), MaxLogLine: int(v[10]), MaxLogLines: int(v[11]), MaxLogBytes: int(v[12]), MaxPeek: int(v[13]),
		DefaultPeek: int(v[14])}
}

func appendOutcome(b []byte, o *wireOutcome) ([]byte, error) {
	b = appendBytes(b, oState, o.State)
	if o.StateReturned {
		b = append(b, oStateReturned)
	}
	if p := o.Prepare; p != nil {
		b = append(b, oPrepare)
		if len(p.Reservations) > 0 {
			b = binary.AppendUvarint(append(b, pReservations), uint64(len(p.Reservations)))
			for _, r := range p.Reservations {
				b = appendLen(b, r.Topic)
				b = appendStrs(b, r.IDs)
			}
		}
		b = appendStr(b, pUITitle, p.UITitle)
		b = appendStr(b, pWakeAt, p.WakeAt)
		b = appendBytes(b, pRaw, p.Raw)
		b = append(b, 0)
	}
	if m := o.Mutation; m != nil {
		b = append(b, oMutation)
		b = appendStr(b, mConnector, m.Connector)
		b = appendStr(b, mMethod, m.Method)
		if m.Params != nil {
			raw, err := json.Marshal(m.Params)
			if err != nil {
				return b, err
			}
			b = appendBytes(b, mParams, raw)
		}
		b = append(b, 0)
	}
	return append(b, 0), nil
}

func appendLen[T ~string | ~[]byte](b []byte, s T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendStrs writes a list whose nil and empty differ (as JSON's null and
// []): its length plus one, 0 for nil.
func appendStrs(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ss))+1)
	for _, s := range ss {
		b = appendLen(b, s)
	}
	return b
}

// appendStr and appendBytes leave out an empty value, as omitempty did.
func appendStr(b []byte, tag byte, s string) []byte {
	if s == "" {
		return b
	}
	return appendLen(append(b, tag), s)
}

func appendBytes(b []byte, tag byte, p []byte) []byte {
	if len(p) == 0 {
		return b
	}
	return appendLen(append(b, tag), p)
}

// frameDecoder reads one frame's body. The first fault is kept in err and
// every read after it gives zero values, so a decode runs to its end
// without checks at each step and reports the fault where it was.
type frameDecoder struct {
	b   []byte
	off int
	// checked: the frame comes from a worker; its JSON is checked and its
	// strings made valid UTF-8
	checked bool
	err     error
	field   string // what is being read, for the error
}

func (d *frameDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at byte %d: %s", d.field, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *frameDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail("the frame ends early")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *frameDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("not a number")
		return 0
	}
	d.off += n
	return v
}

func (d *frameDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("not a number")
		return 0
	}
	d.off += n
	return v
}

// count is a number of elements each at least least bytes long on the
// wire: more than the bytes left can hold is refused before anything is
// made for them, so a frame makes no more than its own size allows.
func (d *frameDecoder) count(n uint64, least int) int {
	if left := uint64(len(d.b) - d.off); n > left/uint64(least) {
		d.fail("%d elements, with %d bytes left", n, left)
		return 0
	}
	return int(n)
}

// bytes is a length-prefixed slice of the frame (not a copy: a frame's
// buffer is its own).
func (d *frameDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("%d bytes, with %d left", n, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return p
}

func (d *frameDecoder) str() string {
	p := d.bytes()
	if d.checked && !utf8.Valid(p) {
		return strings.ToValidUTF8(string(p), "\uFFFD")
	}
	return string(p)
}

// json is a JSON value handed along as it is; from a worker, it must be
// one.
func (d *frameDecoder) json() json.RawMessage {
	p := d.bytes()
	if len(p) == 0 {
		return nil // absent, as omitempty left it
	}
	if d.checked && !json.Valid(p) {
		d.fail("not JSON")
		return nil
	}
	return p
}

// strs reads appendStrs.
func (d *frameDecoder) strs() []string {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	ss := make([]string, d.count(n-1, 1))
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}

// unknown refuses a tag the struct being read does not have.
func (d *frameDecoder) unknown(tag byte) {
	d.fail("unknown field %d", tag)
}

// decodeFrame reads a frame's body; checked says it comes from a worker.
func decodeFrame(b []byte, checked bool) (*frame, error) {
	d := &frameDecoder{b: b, checked: checked, field: "op"}
	c := d.byte()
	if int(c) >= len(opCodes) || c == 0 {
		if d.err == nil {
			return nil, fmt.Errorf("sandbox: a frame of unknown op %d: the pipe is out of step", c)
		}
		return nil, fmt.Errorf("sandbox: an empty frame: the pipe is out of step")
	}
	f := &frame{Op: opCodes[c]}
	for d.err == nil && d.off < len(d.b) {
		tag := d.byte()
		if checked && hostOnly(tag) {
			// deny by default: what only the host sends is not read from
			// a worker at all
			d.field = "frame"
			d.fail("field %d, which only the host sends", tag)
			break
		}
		switch tag {
		case fKey:
			d.field = "key"
			f.Key = d.str()
		case fScript:
			f.Script = d.load()
		case fInv:
			f.Inv = d.inv(0)
		case fName:
			d.field = "name"
			f.Name = hostCallName(d.str())
		case fArgs:
			d.field = "args"
			f.Args = d.json()
		case fResult:
			d.field = "result"
			f.Result = d.json()
		case fDeadline:
			d.field = "deadline"
			f.Deadline = d.varint()
		case fTold:
			f.Told = d.told()
		case fOutcome:
			f.Outcome = d.outcome()
		case fLoaded:
			d.field = "loaded"
			f.Loaded = &wireScript{}
			d.unmarshal(f.Loaded)
		case fErr:
			d.field = "err"
			f.Err = &wireErr{}
			d.unmarshal(f.Err)
		case fRetire:
			f.Retire = true
		case fMissing:
			f.Missing = true
		default:
			d.field = "frame"
			d.unknown(tag)
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("sandbox: a malformed %q frame: %w", f.Op, d.err)
	}
	return f, nil
}

// hostOnly says whether a frame field is one only the host writes: a job
// (its key, script and invocation, prefetched events included) and a
// call's result.
func hostOnly(tag byte) bool {
	return tag == fKey || tag == fScript || tag == fInv || tag == fResult
}

func (d *frameDecoder) unmarshal(v any) {
	p := d.bytes()
	if d.err == nil {
		if err := json.Unmarshal(p, v); err != nil {
			d.fail("%v", err)
		}
	}
}

func (d *frameDecoder) load() *wireLoad {
	l := &wireLoad{}
	for d.err == nil {
		switch tag := d.byte(); tag {
		case 0:
			return l
		case lFile:
			d.field = "script.file"
			l.File = d.str()
		case lSource:
			d.field = "script.source"
			l.Source = d.bytes()
		case lOpts:
			d.field = "script.opts"
			d.unmarshal(&l.Opts)
		default:
			d.unknown(tag)
		}
	}
	return l
}

// inv reads a wireInv; depth 1 is a "then", which has none of its own.
func (d *frameDecoder) inv(depth int) *wireInv {
	inv := &wireInv{}
	for d.err == nil {
		switch tag := d.byte(); tag {
		case 0:
			return inv
		case iHandler:
			d.field = "inv.handler"
			inv.Handler = d.str()
		case iPhase:
			d.field = "inv.phase"
			inv.Phase = Phase(d.str())
		case iState:
			d.field = "inv.state"
			inv.State = d.json()
		case iPrepared:
			d.field = "inv.prepared"
			inv.Prepared = d.json()
		case iMutationResult:
			d.field = "inv.mutationResult"
			inv.MutationResult = d.json()
		case iLimits:
			d.field = "inv.limits"
			var v [15]int64
			for i := range v {
				v[i] = d.varint()
			}
			setLimits(&inv.Limits, v)
		case iPrefetched:
			d.field = "inv.prefetched"
			inv.Prefetched = d.prefetched()
		case iThen:
			if depth > 0 {
				d.field = "inv.then"
				d.fail("a then inside a then")
				break
			}
			inv.Then = d.inv(depth + 1)
		default:
			d.unknown(tag)
		}
	}
	return inv
}

func (d *frameDecoder) prefetched() map[string][]Event {
	n := d.count(d.uvarint(), 2) // a topic, its count
	pre := make(map[string][]Event, n)
	for range n {
		topic := d.str()
		evs := make([]Event, d.count(d.uvarint(), 4)) // id, payload, time
		for i := range evs {
			e := &evs[i]
			e.MessageID = d.str()
			if e.Payload = d.json(); e.Payload == nil {
				e.Payload = json.RawMessage("null") // as JSON gave a nil payload back
			}
			sec := d.varint()
			nsec := d.uvarint()
			if nsec >= 1e9 {
				d.fail("a time's nanoseconds of %d", nsec)
			}
			e.CreatedAt = time.Unix(sec, int64(nsec)).UTC()
		}
		if d.err != nil {
			return nil
		}
		pre[topic] = evs
	}
	return pre
}

// A told call's first byte says which it is.
const (
	toldPublish byte = iota
	toldRegister
)

func (d *frameDecoder) told() []toldCall {
	d.field = "told"
	told := make([]toldCall, d.count(d.uvarint(), 5)) // kind, then four fields
	for i := range told {
		t := &told[i]
		switch kind := d.byte(); kind {
		case toldRegister:
			t.Input = &InputRequest{Source: d.str(), Type: d.str(), ID: d.str(), Title: d.str()}
		case toldPublish:
			t.Pub.Topics = d.strs()
			t.Pub.MessageID = d.str()
			t.Pub.InputID = d.str()
			t.Pub.Payload = d.json()
		default:
			d.fail("a told call of kind %d", kind)
			return nil
		}
	}
	return told
}

func (d *frameDecoder) outcome() *wireOutcome {
	o := &wireOutcome{}
	for d.err == nil {
		switch tag := d.byte(); tag {
		case 0:
			return o
		case oState:
			d.field = "outcome.state"
			o.State = d.json()
		case oStateReturned:
			o.StateReturned = true
		case oPrepare:
			o.Prepare = d.prepare()
		case oMutation:
			o.Mutation = d.mutation()
		default:
			d.field = "outcome"
			d.unknown(tag)
		}
	}
	return o
}

func (d *frameDecoder) prepare() *wirePrepare {
	p := &wirePrepare{}
	for d.err == nil {
		switch tag := d.byte(); tag {
		case 0:
			return p
		case pReservations:
			d.field = "outcome.prepare.reservations"
			p.Reservations = make([]Reservation, d.count(d.uvarint(), 2)) // topic, ids
			for i := range p.Reservations {
				p.Reservations[i].Topic = d.str()
				p.Reservations[i].IDs = d.strs()
			}
		case pUITitle:
			d.field = "outcome.prepare.uiTitle"
			p.UITitle = d.str()
		case pWakeAt:
			d.field = "outcome.prepare.wakeAt"
			p.WakeAt = d.str()
		case pRaw:
			d.field = "outcome.prepare.raw"
			p.Raw = d.json()
		default:
			d.field = "outcome.prepare"
			d.unknown(tag)
		}
	}
	return p
}

func (d *frameDecoder) mutation() *MutationCall {
	m := &MutationCall{}
	for d.err == nil {
		switch tag := d.byte(); tag {
		case 0:
			return m
		case mConnector:
			d.field = "outcome.mutation.connector"
			m.Connector = d.str()
		case mMethod:
			d.field = "outcome.mutation.method"
			m.Method = d.str()
		case mParams:
			d.field = "outcome.mutation.params"
			d.unmarshal(&m.Params)
		default:
			d.field = "outcome.mutation"
			d.unknown(tag)
		}
	}
	return m
}
