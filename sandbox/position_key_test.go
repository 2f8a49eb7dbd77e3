package sandbox

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// keyByPattern is key's rule as a pattern tried at each offset in turn:
// the key, in matching quotes or none, at the search's start or after a
// character that is not part of a name or a member access, and followed by
// a colon or a parenthesis.
func keyByPattern(l locator, from int, name string) int {
	if from < 0 {
		from = 0
	}
	re := regexp.MustCompile(`^(["']?)` + regexp.QuoteMeta(name) + `(["']?)\s*[:(]`)
	before := regexp.MustCompile(`[^\w$.]$`)
	for p := from; p < len(l.src); p++ {
		if p > from && !before.MatchString(l.src[from:p]) {
			continue
		}
		if m := re.FindStringSubmatchIndex(l.src[p:]); m != nil && l.src[p+m[2]:p+m[3]] == l.src[p+m[4]:p+m[5]] {
			return p
		}
	}
	return -1
}

func TestKeyFindsWhatThePatternFound(t *testing.T) {
	fixed := []string{
		`handler: 1`, `"handler": 1`, `'handler' : 1`, "`handler`: 1", `async handler(ctx) {}`,
		`x.handler: 1, handler: 2`, `myhandler: 1, handler(`, `$handler: 1 "handler': 2 handler:3`,
		`handler`, `handler `, `"handler"`, `x'handler': 1, 'handler':2`, `"handler:1`, `handler"`,
		"handler\n\t:", `é'handler':1`, `_handler:1`, `handler.x: 1`,
	}
	for _, src := range fixed {
		l := locator{src: src}
		for from := -1; from <= len(src); from++ {
			if got, want := l.key(from, "handler"), keyByPattern(l, from, "handler"); got != want {
				t.Errorf("key(%d, handler) in %q = %d, the pattern found %d", from, src, got, want)
			}
		}
	}
	// and in generated text made of the pieces a key's neighbours are made of
	pieces := []string{"handler", "h", "andler", `"`, "'", ":", "(", " ", "\n", ".", "$", "_", "x", "1", ",", "é", "{"}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		l := locator{src: b.String()}
		from := r.IntN(len(l.src) + 1)
		if got, want := l.key(from, "handler"), keyByPattern(l, from, "handler"); got != want {
			t.Fatalf("case %d: key(%d, handler) in %q = %d, the pattern found %d", n, from, l.src, got, want)
		}
	}
}

// manyHandlers is a workflow of n producers, whose checks look up each
// one's keys in the source.
func manyHandlers(n int) []byte {
	var src strings.Builder
	src.WriteString("export default Keep.workflow({\n  name: \"big\",\n  topics: {")
	for i := range n {
		fmt.Fprintf(&src, "t%d: {}, ", i)
	}
	src.WriteString("},\n  producers: {\n")
	for i := range n {
		fmt.Fprintf(&src, "    p%d: {\n      publishes: [\"t%d\"],\n      schedule: { interval: \"1h\" },\n      handler: async (ctx) => {\n        for (const f of await ctx.files.list({ dir: \"inbox\" })) {\n          await ctx.publish(\"t%d\", { messageId: f.name, payload: { n: %d } });\n        }\n      },\n    },\n", i, i, i, i)
	}
	src.WriteString("  },\n});\n")
	return []byte(src.String())
}

// A workflow of as many handlers as one may declare loads, and one of more
// is refused for it: finding each one's keys in the source took the top
// level past its time limit at 500, and mapping each call site through the
// source map read anew did at 1,500.
func TestManyHandlersLoad(t *testing.T) {
	s, err := Load("big.js", manyHandlers(maxDeclared), LoadOptions{Methods: testMethods})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Workflow.Producers); n != maxDeclared {
		t.Fatalf("%d producers loaded, want %d", n, maxDeclared)
	}
	// and one over the limit is told so, not stopped by the time limit
	_, err = Load("big.js", manyHandlers(3*maxDeclared/2), LoadOptions{Methods: testMethods})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("producers declares %d entries, over the limit", 3*maxDeclared/2)) {
		t.Fatalf("a workflow of %d producers: %v, want it refused for declaring too many", 3*maxDeclared/2, err)
	}
}

func BenchmarkValidateManyHandlers(b *testing.B) {
	src := manyHandlers(500)
	for b.Loop() {
		if _, err := Load("big.js", src, LoadOptions{Methods: testMethods}); err != nil {
			b.Fatal(err)
		}
	}
}
