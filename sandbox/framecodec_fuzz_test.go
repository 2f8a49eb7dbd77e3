package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

// FuzzFrameFromAWorker: whatever bytes a worker writes, the host's reader
// returns a frame or an error, and never panics: a worker is where a
// script runs, and the host must outlive it. A frame it accepts from a
// worker carries nothing only the host sends, and reads back the same when
// written again. Seeded with every full frame and its every prefix; run
// longer with
//
//	go test ./sandbox -run XXX -fuzz FuzzFrameFromAWorker -fuzztime 60s
func FuzzFrameFromAWorker(f *testing.F) {
	for _, fr := range fullFrames() {
		b := encodeBody(f, fr)
		for i := range b {
			f.Add(withLength(b[:i]))
		}
		f.Add(withLength(b))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, err := readFrame(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			var m *malformedFrame
			if !errors.As(err, &m) && len(in) >= 4 && len(in)-4 >= int(uint32(in[0])<<24|uint32(in[1])<<16|uint32(in[2])<<8|uint32(in[3])) {
				t.Fatalf("a whole frame refused without saying it is malformed: %v", err)
			}
			return
		}
		if fromHost(fr) {
			t.Fatalf("a frame read from a worker carries a field only the host sends: %+v", fr)
		}
		again, err := appendFrame(nil, fr)
		if err != nil {
			return // the reader's bounds are the writer's: a value it cannot write again is one it never writes
		}
		back, err := decodeFrame(again, true)
		if err != nil {
			t.Fatalf("a frame accepted from a worker, written again, is refused: %v", err)
		}
		if b2, err := appendFrame(nil, back); err != nil || !bytes.Equal(b2, again) {
			t.Fatalf("a frame accepted from a worker does not read back the same (%v)", err)
		}
	})
}
