package sandbox

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// example06a is chapter 06a's "Workflow Declaration Example", verbatim.
const example06a = `export default Keep.workflow({
  name: "email-to-sheets",

  topics: {
    "email.received": {},
    "row.created": {},
  },

  producers: {
    pollEmail: {
      publishes: ["email.received"],
      schedule: { interval: "5m" },
      handler: async (ctx, state) => {
        const emails = await ctx.gmail.search({ after: state?.cursor });
        for (const e of emails) {
          // Register the external input
          const inputId = ctx.registerInput({
            source: "gmail",
            type: "email",
            id: e.id,
            title: ` + "`Email from ${e.from}: \"${e.subject}\"`" + `
          });

          // Publish event referencing the input
          await ctx.publish("email.received", {
            messageId: e.id,
            inputId,
            payload: { subject: e.subject, from: e.from },
          });
        }
        return { cursor: emails.lastCursor };
      }
    }
  },

  consumers: {
    processEmail: Keep.consumer({
      subscribe: ["email.received"],
      publishes: ["row.created"],

      async prepare(ctx, state) {
        const pending = await ctx.peek("email.received");
        if (pending.length === 0) return { reservations: [], data: {} };
        const event = pending[0];
        return {
          reservations: [{ topic: "email.received", ids: [event.messageId] }],
          data: { messageId: event.messageId, from: event.payload.from, subject: event.payload.subject },
          ui: {
            title: ` + "`Add row for ${event.payload.from}`" + `
          }
        };
      },

      async mutate(ctx, prepared) {
        await ctx.sheets.appendRow({
          spreadsheetId: "...",
          values: [prepared.data.from, prepared.data.subject]
        });
      },

      async next(ctx, prepared, mutationResult) {
        if (mutationResult.status === 'applied') {
          // No inputId needed - caused_by inherited from reserved events
          await ctx.publish("row.created", {
            messageId: ` + "`row:${prepared.data.messageId}`" + `,
            payload: { rowId: mutationResult.result.rowId }
          });
        }
      },
    })
  }
});
`

var exampleMethods = []MethodSpec{
	{Connector: "gmail", Method: "search", Kind: KindRead, Args: args("after", "limit")},
	{Connector: "sheets", Method: "appendRow", Kind: KindMutate, Args: args("spreadsheetId", "values")},
}

func TestLoad(t *testing.T) {
	t.Parallel()

	t.Run("the chapter 06a example loads unchanged", func(t *testing.T) {
		t.Parallel()
		s, err := Load("email.js", []byte(example06a), LoadOptions{Methods: exampleMethods, MinInterval: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		want := Workflow{
			Name:      "email-to-sheets",
			Topics:    []string{"email.received", "row.created"},
			Producers: []Producer{{Name: "pollEmail", Publishes: []string{"email.received"}, Schedule: Schedule{Interval: 5 * time.Minute, Text: "5m"}}},
			Consumers: []Consumer{{Name: "processEmail", Subscribe: []string{"email.received"}, Publishes: []string{"row.created"}, Concurrency: 1}},
		}
		if !reflect.DeepEqual(s.Workflow, want) {
			t.Errorf("workflow = %+v\nwant %+v", s.Workflow, want)
		}
		if !reflect.DeepEqual(s.Capabilities, []string{"sheets.appendRow"}) {
			t.Errorf("capabilities = %v", s.Capabilities)
		}
	})

	t.Run("a TypeScript file loads", func(t *testing.T) {
		t.Parallel()
		src := `interface State { cursor?: string }
type Ctx = any;
export default Keep.workflow({
  name: "typed",
  topics: { "a": {} },
  producers: {
    p: {
      publishes: ["a"],
      schedule: { cron: "0 9 * * 1-5" },
      handler: async (ctx: Ctx, state?: State): Promise<State> => {
        const n: number = 1;
        return { cursor: String(n) };
      },
    },
  },
});
`
		s, err := Load("typed.ts", []byte(src), LoadOptions{Methods: testMethods})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Workflow.Producers[0].Schedule; got.Cron != "0 9 * * 1-5" || got.Text != "0 9 * * 1-5" {
			t.Errorf("schedule = %+v", got)
		}
		out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		if string(out.State) != `{"cursor":"1"}` {
			t.Errorf("state = %s", out.State)
		}
	})

	t.Run("a syntax error is a diagnostic with file:line:col", func(t *testing.T) {
		t.Parallel()
		src := "export default Keep.workflow({\n  name: \"x\",\n  topics: { a: {} ,, },\n});\n"
		_, err := Load("bad.js", []byte(src), LoadOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Diagnostics) != 1 {
			t.Fatalf("err = %v", err)
		}
		if d := ve.Diagnostics[0]; d.File != "bad.js" || d.Line != 3 || d.Col != 20 {
			t.Errorf("diagnostic = %+v", d)
		}
		if !strings.HasPrefix(err.Error(), "bad.js:3:20: ") {
			t.Errorf("Error() = %q", err.Error())
		}
	})

	t.Run("a throwing top level is a diagnostic with its position", func(t *testing.T) {
		t.Parallel()
		src := "const x = null;\nx.y;\nexport default Keep.workflow({});\n"
		_, err := Load("throws.js", []byte(src), LoadOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), "throws.js:2:") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("a top level that never ends does not hang the load", func(t *testing.T) {
		t.Parallel()
		heavy.RLock()
		defer heavy.RUnlock()
		if testing.Short() {
			t.Skip("takes the load wall time")
		}
		_, err := Load("loop.js", []byte("while (true) {}\nexport default Keep.workflow({});\n"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "wall time") {
			t.Errorf("err = %v", err)
		}
	})
}

// validBase is a valid workflow the validation cases break one rule of.
const validBase = `export default Keep.workflow({
  name: "base",
  topics: { "in": {}, "out": {}, "spare": {} },
  producers: {
    poll: {
      publishes: ["in"],
      schedule: { interval: "5m" },
      handler: async (ctx, state) => { await ctx.files.list({ dir: "x" }); },
    },
  },
  consumers: {
    work: Keep.consumer({
      subscribe: ["in"],
      publishes: ["out"],
      async prepare(ctx, state) { return { reservations: [], data: {} }; },
      async mutate(ctx, prepared) { await ctx.files.write({ path: "a", content: "b" }); },
      async next(ctx, prepared, result) {},
    }),
  },
});
`

// at is the 1-based line:col of the n-th (1-based) occurrence of needle.
func at(src, needle string, n int) string {
	off := -1
	for i := 0; i < n; i++ {
		j := strings.Index(src[off+1:], needle)
		if j < 0 {
			return "not found"
		}
		off += 1 + j
	}
	line, col := locator{src: src}.pos(off)
	return fmt.Sprintf("%d:%d", line, col)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	opts := LoadOptions{Methods: testMethods, MinInterval: time.Minute}
	if _, err := Load("base.js", []byte(validBase), opts); err != nil {
		t.Fatalf("the base workflow must load: %v", err)
	}

	tests := []struct {
		name        string
		from, to    string // replace from with to in validBase
		needle      string // the diagnostic points at its first occurrence in the result...
		nth         int    // ...or the nth
		wantMessage string
	}{
		{"a missing workflow name", `name: "base",`, ``, "Keep.workflow", 1, "the workflow has no name"},
		{"an empty workflow name", `name: "base"`, `name: ""`, "name:", 1, "non-empty string"},
		{"a workflow name with capitals and spaces", `name: "base"`, `name: "My Flow"`, `"My Flow"`, 1, "lowercase letters"},
		{"missing topics", `topics: { "in": {}, "out": {}, "spare": {} },`, ``, "Keep.workflow", 1, "declares no topics"},
		{"a producer publishing to an undeclared topic", `publishes: ["in"]`, `publishes: ["nope"]`, `"nope"`, 1, `names topic "nope", which is not declared`},
		{"a consumer subscribing to an undeclared topic", `subscribe: ["in"]`, `subscribe: ["ghost"]`, `"ghost"`, 1, `names topic "ghost"`},
		{"a consumer publishing to an undeclared topic", `publishes: ["out"]`, `publishes: ["gone"]`, `"gone"`, 1, `names topic "gone"`},
		{"two handlers publishing to one topic", `publishes: ["out"]`, `publishes: ["in"]`, `"in"`, 3, `topic "in" already has publishing handler "poll"`},
		{"a consumer with no subscribe", `subscribe: ["in"],`, ``, "work:", 1, `consumer "work" has no subscribe`},
		{"a consumer with an empty subscribe", `subscribe: ["in"]`, `subscribe: []`, "subscribe:", 1, "is empty"},
		{"a producer with no publishes", `publishes: ["in"],`, ``, "poll:", 1, `producer "poll" has no publishes`},
		{"a producer with an empty publishes", `publishes: ["in"]`, `publishes: []`, "publishes:", 1, "is empty"},
		{"publishes that is not an array", `publishes: ["in"]`, `publishes: "in"`, "publishes:", 1, "must be an array of topic names"},
		{"an interval with a bad unit", `interval: "5m"`, `interval: "5x"`, `"5x"`, 1, "not a number followed by s, m, h or d"},
		{"an interval below the shortest allowed", `interval: "5m"`, `interval: "10s"`, `"10s"`, 1, "shorter than the shortest allowed, 1m0s"},
		{"a cron with six fields", `interval: "5m"`, `cron: "0 0 9 * * *"`, `"0 0 9 * * *"`, 1, "has 6 fields; want 5"},
		{"a cron that does not parse", `interval: "5m"`, `cron: "61 * * * *"`, `"61 * * * *"`, 1, "cron \"61 * * * *\""},
		{"both interval and cron", `interval: "5m"`, `interval: "5m", cron: "0 9 * * *"`, "schedule:", 1, "both interval and cron"},
		{"neither interval nor cron", `{ interval: "5m" }`, `{}`, "schedule:", 1, "needs interval or cron"},
		{"no schedule", `schedule: { interval: "5m" },`, ``, "poll:", 1, `producer "poll" has no schedule`},
		{"an empty watched folder", `interval: "5m"`, `watch: ""`, `""`, 1, `watch of producer "poll" must be a folder under the files roots`},
		{"a watched folder that is no string", `interval: "5m"`, `watch: 7`, `schedule:`, 1, `watch of producer "poll" must be a folder`},
		{"a watch beside both interval and cron", `interval: "5m"`, `watch: "in", interval: "5m", cron: "0 9 * * *"`, "schedule:", 1, "both interval and cron"},
		{"a handler that is not a function", `handler: async (ctx, state) => { await ctx.files.list({ dir: "x" }); },`, `handler: "run",`, "handler:", 1, "handler of producer \"poll\" must be a function"},
		{"a consumer without mutate", `async mutate(ctx, prepared) { await ctx.files.write({ path: "a", content: "b" }); },`, ``, "work:", 1, `consumer "work" has no mutate function`},
		{"a consumer without next", `async next(ctx, prepared, result) {},`, ``, "work:", 1, `consumer "work" has no next function`},
		{"a prepare that is not a function", `async prepare(ctx, state) { return { reservations: [], data: {} }; },`, `prepare: 42,`, "prepare:", 1, "prepare of consumer \"work\" must be a function"},
		{"a consumer that is not an object", `work: Keep.consumer({`, `work: 1, zzz: Keep.consumer({`, "work:", 1, `consumer "work" must be Keep.consumer`},
		{"a call to a method no connector has", `ctx.files.list({`, `ctx.files.delete({`, "ctx.files.delete", 1, `connector "files" has no method "delete"`},
		{"a call to a connector that does not exist", `ctx.files.list({`, `ctx.slack.history({`, "ctx.slack.history", 1, `there is no connector "slack"`},
		{"a concurrency of zero", `subscribe: ["in"],`, `subscribe: ["in"], concurrency: 0,`, "concurrency:", 1, `concurrency of consumer "work" is 0; it must be a whole number from 1 to 64`},
		{"a concurrency above the bound", `subscribe: ["in"],`, `subscribe: ["in"], concurrency: 65,`, "concurrency:", 1, `concurrency of consumer "work" is 65`},
		{"a fractional concurrency", `subscribe: ["in"],`, `subscribe: ["in"], concurrency: 2.5,`, "concurrency:", 1, `concurrency of consumer "work" is 2.5`},
		{"a concurrency that is a string", `subscribe: ["in"],`, `subscribe: ["in"], concurrency: "4",`, "concurrency:", 1, `concurrency of consumer "work" must be a whole number from 1 to 64`},
		{"a producer's name with a newline", `poll: {`, `"poll\n2  poll  producer  committed": {`, "producers:", 1, `producer name "poll\n2  poll  producer  committed" must be visible text on one line`},
		{"a consumer's name with a bidi override", `work: Keep.consumer({`, `"work\u202e": Keep.consumer({`, "consumers:", 1, `consumer name "work\u202e" must be visible text on one line`},
		{"a topic's name with an escape", `"spare": {}`, `"spare\u001b[2J": {}`, "topics:", 1, `topic name "spare\x1b[2J" must be visible text on one line`},
		{"a topic's name with a Hangul filler", `"spare": {}`, `"spare\u3164": {}`, "topics:", 1, `topic name "spare\u3164" must be visible text`},
		{"no default export", `export default Keep.workflow({`, `const unused = ({`, "", 0, "no `export default Keep.workflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(validBase, tt.from, tt.to, 1)
			if src == validBase {
				t.Fatalf("the case does not change the source")
			}
			_, err := Load("base.js", []byte(src), opts)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			want := "0:0"
			if tt.needle != "" {
				want = at(src, tt.needle, tt.nth)
			}
			for _, d := range ve.Diagnostics {
				if strings.Contains(d.Message, tt.wantMessage) {
					if got := fmt.Sprintf("%d:%d", d.Line, d.Col); got != want || d.File != "base.js" {
						t.Errorf("%q is at %s:%s, want base.js:%s", d.Message, d.File, got, want)
					}
					return
				}
			}
			t.Errorf("no diagnostic contains %q:\n%v", tt.wantMessage, err)
		})
	}

	t.Run("every problem of a file is reported, one line each", func(t *testing.T) {
		t.Parallel()
		src := strings.NewReplacer(`name: "base"`, `name: "B A D"`, `interval: "5m"`, `interval: "soon"`, `subscribe: ["in"]`, `subscribe: ["nowhere"]`).Replace(validBase)
		_, err := Load("base.js", []byte(src), opts)
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Diagnostics) != 3 {
			t.Fatalf("err = %v", err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 {
			t.Fatalf("Error() has %d lines: %q", len(lines), err.Error())
		}
		for i, l := range lines {
			if l != ve.Diagnostics[i].String() || !strings.HasPrefix(l, "base.js:") {
				t.Errorf("line %d = %q", i, l)
			}
		}
	})

	t.Run("a consumer's concurrency is 1 unless declared", func(t *testing.T) {
		t.Parallel()
		for decl, want := range map[string]int{``: 1, ` concurrency: 4,`: 4, ` concurrency: 64,`: 64} {
			src := strings.Replace(validBase, `subscribe: ["in"],`, `subscribe: ["in"],`+decl, 1)
			s, err := Load("base.js", []byte(src), opts)
			if err != nil {
				t.Fatalf("%q: %v", decl, err)
			}
			if got := s.Workflow.Consumers[0].Concurrency; got != want {
				t.Errorf("%q: concurrency = %d, want %d", decl, got, want)
			}
		}
	})

	t.Run("a topic nobody reads is fine", func(t *testing.T) {
		t.Parallel()
		s, err := Load("base.js", []byte(validBase), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Workflow.Topics, []string{"in", "out", "spare"}) {
			t.Errorf("topics = %v", s.Workflow.Topics)
		}
	})

	t.Run("two consumers reading one topic is refused", func(t *testing.T) {
		t.Parallel()
		second := `    other: Keep.consumer({
      subscribe: ["in"],
      async prepare(ctx, state) { return { reservations: [], data: {} }; },
      async mutate(ctx, prepared) {},
      async next(ctx, prepared, result) {},
    }),
  },
});
`
		src := strings.Replace(validBase, "  },\n});\n", second, 1)
		_, err := Load("base.js", []byte(src), opts)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("base.js:%s: topic \"in\" already has consumer \"work\"", at(src, `"in"`, 4))) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	src := strings.Replace(validBase, `async mutate(ctx, prepared) { await ctx.files.write({ path: "a", content: "b" }); },`,
		`async mutate(ctx, prepared) { if (0) { ctx.sheets.appendRow({}); ctx.files.write({}); } else { ctx.files.write({}); } },`, 1)
	src = strings.Replace(src, `async prepare(ctx, state) {`, `async prepare(ctx, state) { if (0) ctx.files.read({});`, 1)
	s, err := Load("base.js", []byte(src), LoadOptions{Methods: testMethods})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"files.write", "sheets.appendRow"}; !reflect.DeepEqual(s.Capabilities, want) {
		t.Errorf("capabilities = %v, want %v (sorted, unique, mutators only)", s.Capabilities, want)
	}
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 3, 10, 8, 30, 0, 0, time.UTC)

	t.Run("intervals parse with s, m, h and d", func(t *testing.T) {
		t.Parallel()
		for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "5m": 5 * time.Minute, "1h": time.Hour, "2d": 48 * time.Hour} {
			if got, err := ParseInterval(in); err != nil || got != want {
				t.Errorf("ParseInterval(%q) = %v, %v", in, got, err)
			}
		}
		for _, in := range []string{"", "5", "m", "1.5h", "5 m", "-1m", "0s", "1w"} {
			if _, err := ParseInterval(in); err == nil {
				t.Errorf("ParseInterval(%q) succeeded", in)
			}
		}
	})

	t.Run("next of an interval adds it", func(t *testing.T) {
		t.Parallel()
		s, err := ParseSchedule("5m")
		if err != nil || s.Interval != 5*time.Minute || s.Text != "5m" {
			t.Fatalf("ParseSchedule = %+v, %v", s, err)
		}
		if got := s.Next(base); !got.Equal(base.Add(5 * time.Minute)) {
			t.Errorf("Next = %v", got)
		}
	})

	t.Run("next of a cron is its next match", func(t *testing.T) {
		t.Parallel()
		s, err := ParseSchedule("0 9 * * *")
		if err != nil || s.Cron != "0 9 * * *" {
			t.Fatalf("ParseSchedule = %+v, %v", s, err)
		}
		if got, want := s.Next(base), time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC); !got.Equal(want) {
			t.Errorf("Next = %v, want %v", got, want)
		}
	})

	t.Run("descriptors and six fields are refused", func(t *testing.T) {
		t.Parallel()
		for _, in := range []string{"@daily", "@every 5m", "0 0 9 * * *", "CRON_TZ=UTC 0 9 * * *"} {
			if _, err := ParseSchedule(in); err == nil {
				t.Errorf("ParseSchedule(%q) succeeded", in)
			}
		}
	})
}

// A declaration built by code is bounded: too many entries are one
// diagnostic, and the diagnostics themselves are capped.
func TestGeneratedDeclarationsAreBounded(t *testing.T) {
	t.Parallel()
	src := `const producers = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => ["p" + i, {}]));
export default Keep.workflow({ name: "t", topics: { a: {} }, producers });
`
	_, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Diagnostics) != 1 || !strings.Contains(err.Error(), "producers declares 5000 entries, over the limit of 1000") {
		t.Errorf("err = %v", err)
	}

	src = `const producers = Object.fromEntries(Array.from({ length: 500 }, (_, i) => ["p" + i, {}]));
export default Keep.workflow({ name: "t", topics: { a: {} }, producers });
`
	_, err = Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if !errors.As(err, &ve) || len(ve.Diagnostics) != maxDiagnostics+1 || !strings.Contains(err.Error(), "more problems not shown") {
		t.Errorf("%d diagnostics", len(ve.Diagnostics))
	}
}

// Reading the declaration runs the file's code again wherever it holds a
// getter or a proxy. That code is the file's: a throw is a diagnostic at
// its line, a loop or a recursion is stopped by the limits of the top
// level, never a panic of the worker that loads the file (which killed it,
// "panic: Error: boom", and gave the diagnostic no position), nor a worker
// killed for overstaying its time.
func TestDeclarationGettersRunUnderTheLimits(t *testing.T) {
	t.Parallel()
	const tail = `schedule: { interval: "5m" }, handler: async () => {} } } });`
	for _, tt := range []struct{ name, src, want string }{
		{"a proxy trap that throws", `export default Keep.workflow({ name: "x",
  topics: new Proxy({}, { ownKeys() { throw new Error("boom"); } }) });`,
			`t.js:2:44: evaluating the file: Error: boom`},
		{"a getter that throws", `export default Keep.workflow({ name: "x", topics: { a: {} },
  producers: { p: { get publishes() { throw new Error("no topics"); }, ` + tail,
			`t.js:2:44: evaluating the file: Error: no topics`},
		{"a toString that throws", `export default Keep.workflow({ name: "x", topics: { a: {} },
  producers: { p: { publishes: ["a"], schedule: { interval: { toString() { throw new Error("ts"); } } }, handler: async () => {} } } });`,
			`t.js:2:81: evaluating the file: Error: ts`},
		{"a getter that recurses without end", `function f() { return f(); }
export default Keep.workflow({ name: "x", get topics() { return f(); } });`,
			`t.js:1:24: evaluating the file: the call stack grew past 1000 frames`},
		{"a getter that never returns", `export default Keep.workflow({ name: "x",
  get topics() { for (;;) {} } });`,
			`evaluating the file: ran past the wall time of 2s`},
		{"a top level that recurses without end", `function f() { return f(); } f();`,
			`t.js:1:24: evaluating the file: the call stack grew past 1000 frames`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("t.js", []byte(tt.src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (%T), want a diagnostic containing %q", err, err, tt.want)
			}
			if err != nil && (strings.Contains(err.Error(), "died") || strings.Contains(err.Error(), "abandoned")) {
				t.Errorf("the worker did not survive the file: %v", err)
			}
		})
	}
}

// Loads at once take at most loadSlots workers, whoever asks: a client of
// mcp serve may send forty validates together, each a worker process that
// may grow to loadMemory.
func TestLoadsAtOnceAreBounded(t *testing.T) {
	src := []byte(`const t0 = Date.now(); while (Date.now() - t0 < 150) {}
export default Keep.workflow({ name: "slow", topics: {}, producers: {} });`)
	BusyPeak() // counts from here
	var wg sync.WaitGroup
	for range 3 * cap(loadSlots) {
		wg.Go(func() {
			if _, err := Load("slow.js", src, LoadOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak := BusyPeak(); peak > int64(cap(loadSlots)) {
		t.Fatalf("%d workers loaded at once, want at most %d", peak, cap(loadSlots))
	}
}
