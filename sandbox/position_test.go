package sandbox

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every validation and run error names the user's file, line and column,
// and never shows the transformed source.
func TestErrorPositions(t *testing.T) {
	t.Parallel()
	top := func(code string) string { return "const x = 1;\n" + code + "\n" + handlers{}.source() }
	transformed := regexp.MustCompile(`Line \d+:\d+|__wf|parse transformed|:0:0`)

	for _, tt := range []struct{ name, src, want string }{
		{"a dynamic import in a handler", handlers{producer: `  await import("fs");`}.source(),
			`^wf\.js:9:9: import\(\) is not available: a workflow is one file and loads no modules`},
		{"a top-level dynamic import", top(`await import("fs");`), `^wf\.js:2:1: `},
		{"a syntax error", top(`const y = ;`), `^wf\.js:2:11: Unexpected ";"`},
		{"a top-level throw", top(`  throw new Error("top");`), `^wf\.js:2:\d+: evaluating the file: Error: top`},
		{"a top-level throw of a string", top(`  throw "top";`), `^wf\.js:2:\d+: evaluating the file: top`},
		{"a top-level require", top(`const fs = require("fs");`), `^wf\.js:2:\d+: evaluating the file: ReferenceError: require is not defined`},
		{"a top-level limit hit", top(`  "x".repeat(2e9);`), `^wf\.js:2:\d+: evaluating the file: String\.prototype\.repeat would allocate`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("wf.js", []byte(tt.src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err == nil {
				t.Fatal("loaded")
			}
			if !regexp.MustCompile(tt.want).MatchString(err.Error()) || transformed.MatchString(err.Error()) {
				t.Errorf("err = %q, want %s", err, tt.want)
			}
		})
	}

	for _, tt := range []struct{ name, code, want string }{
		{"require in a handler", `  const fs = require("fs");`, `ReferenceError: require is not defined \(wf\.js:9:\d+\)$`},
		{"a thrown Error", `  throw new Error("err");`, `Error: err \(wf\.js:9:\d+\)$`},
		{"a thrown string", `  throw "str";`, `uncaught exception: str \(thrown in this handler; throw an Error to get the line of the throw\) \(wf\.js:8:7\)$`},
		{"a TypeError after an await", `  await null; null.x;`, `TypeError: Cannot read property 'x' of (null|undefined) \(wf\.js:9:\d+\)$`},
		{"a limit hit", `  "x".repeat(2e9);`, `String\.prototype\.repeat would allocate .* \(wf\.js:9:\d+\)$`},
		{"a phase violation", `  const c = ctx; await c.peek("a");`, `ctx\.peek is not allowed in producer .* \(wf\.js:9:\d+\)$`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Load("wf.js", []byte(handlers{producer: tt.code}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			_, err = invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
			if err == nil || !regexp.MustCompile(tt.want).MatchString(err.Error()) || transformed.MatchString(err.Error()) {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
			var e *Error
			if errAs(err, &e) && (e.File != "wf.js" || e.Line == 0 || strings.Contains(e.Stack, "__wf")) {
				t.Errorf("error %+v", e)
			}
		})
	}
}

func errAs(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// A limit the run hit is reported as such, without the note for thrown
// values.
func TestTimeoutIsNotPositionedAsAThrow(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	lim.WallTime = 100 * time.Millisecond
	s := load(t, handlers{producer: `for (;;) {}`})
	_, err := invoke(t, s, PhaseProducer, &recordingHost{}, lim)
	if err == nil || strings.Contains(err.Error(), "thrown in this handler") {
		t.Errorf("err = %v", err)
	}
}
