package mail

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"keep/connectors"
)

// TestAnSMTPReplyIsReadToABound: go-smtp bounds a reply's lines, not
// their number, and the connection's deadline moves on with every read, so
// a server that answered with a multi-line reply that never ends had keep
// hold all of it in memory, as fast as the server could send, until the
// call's timeout. A reply is read to a bound; past it the call fails, the
// server's fault, and after the final dot uncertain (the message may have
// been accepted before the reply ran on).
func TestAnSMTPReplyIsReadToABound(t *testing.T) {
	// not parallel: the allocations measured are the whole process's
	const size = 96 << 20
	for _, tc := range []struct {
		verb string
		want connectors.Class
	}{
		{"EHLO", connectors.Logic},
		{"RCPT", connectors.Logic},
		{".", connectors.Uncertain},
	} {
		s := &rawSMTP{replies: map[string]func(w io.Writer){tc.verb: endless(size)}}
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.SMTP = s.serve(t) })
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := connectors.Do(context.Background(), c, sendCall("big-"+tc.verb, map[string]any{"to": "ann@example.org"}), true)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Errorf("%s: the call allocated %d MiB", tc.verb, grew>>20)
		}
		if connectors.ClassOf(err) != tc.want || !strings.Contains(err.Error(), "reply ran past") {
			t.Errorf("%s: err = %v, want %s saying the reply ran on", tc.verb, err, tc.want)
		}
	}
}
