package clitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFlagErrorsNameTheFlagAsTyped: a flag keep refuses is named the way
// its usage line and help write it (--name, -o), whichever of Go's flag
// messages refused it and whether it is a global flag or a command's;
// Go's own spelling (-name) is a flag keep's help never shows.
func TestFlagErrorsNameTheFlagAsTyped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	for _, c := range []struct {
		args       []string
		raw        bool // without this env's --db and --config
		msg, usage string
	}{
		{args: []string{"deploy", "x.js", "--name"}, msg: "flag needs an argument: --name\n", usage: "usage: keep deploy FILE"},
		{args: []string{"workflows", "--json=maybe"}, msg: `invalid boolean value "maybe" for --json: `, usage: "usage: keep workflows [--json]"},
		{args: []string{"approve", "1", "--always=often"}, msg: `invalid boolean value "often" for --always: `, usage: "usage: keep approve ID"},
		{args: []string{"--bogus"}, msg: "flag provided but not defined: --bogus\n", usage: "usage: keep [--db PATH]"},
		{args: []string{"--db"}, raw: true, msg: "flag needs an argument: --db\n", usage: "usage: keep [--db PATH]"},
		{args: []string{"--json=x", "workflows"}, msg: "flag provided but not defined: --json\n", usage: "usage: keep [--db PATH]"},
		// a one-letter flag stays as the help writes it
		{args: []string{"new", "a note taker", "-o"}, msg: "flag needs an argument: -o\n", usage: `usage: keep new "DESCRIPTION"`},
		// a value the person typed is quoted as typed, never rewritten
		{args: []string{"events", "w", "--status", "for -ab"}, msg: `invalid value "for -ab" for --status: want one of`, usage: "usage: keep events WORKFLOW"},
		{args: []string{"runs", "w", "--limit", "-3"}, msg: `invalid value "-3" for --limit: `, usage: "usage: keep runs WORKFLOW"},
	} {
		var r result
		if c.raw {
			r = e.raw(c.args...)
		} else {
			r = e.keep(c.args...)
		}
		call := "keep " + strings.Join(c.args, " ")
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%s: want exit 2 and nothing on stdout, got %s", call, r)
			continue
		}
		if !strings.Contains(r.stderr, "keep: "+c.msg) || !strings.Contains(r.stderr, c.usage) {
			t.Errorf("%s: want %q and %q on stderr, got:\n%s", call, "keep: "+c.msg, c.usage, r.stderr)
		}
	}
}

// TestHelpJSONOnlyForAPI: --json promises one JSON value on stdout; help
// has one only for the scripting reference (help api), so asking a
// command's help, or the list of commands, for JSON is a usage error
// rather than text a script would fail to parse.
func TestHelpJSONOnlyForAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	for _, args := range [][]string{{"help", "--json"}, {"help", "status", "--json"}, {"help", "auth", "login", "--json"}} {
		r := e.keep(args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--json") || !strings.Contains(r.stderr, "usage: keep help ") {
			t.Errorf("keep %s: want exit 2, nothing on stdout and a usage error naming --json, got %s", strings.Join(args, " "), r)
		}
	}
	for _, args := range [][]string{{"help", "api", "--json"}, {"help", "api", "files", "--json"}} {
		r := e.ok(args...)
		var v map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Errorf("keep %s: not one JSON object: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
	}
	// and help's own help says so
	for _, line := range strings.Split(e.ok("help", "help").stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--json") && !strings.Contains(line, "api") {
			t.Errorf("keep help help offers --json for every help, not for help api: %q", line)
		}
	}
	if r := e.ok("help", "status"); !strings.Contains(r.stdout, "usage: keep status WORKFLOW [--json]") {
		t.Errorf("keep help status without --json lost its text:\n%s", r)
	}
}

// TestHelpShowsAttemptForAnswers: approve, reject and resolve take
// ID@ATTEMPT (the attempt the answer is for, as keep attention --json
// gives it), as resume and retry take WORKFLOW@N; their usage lines say
// so, as those of resume and retry do, and what the line offers is taken.
func TestHelpShowsAttemptForAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	for _, c := range [][]string{
		{"approve", "keep approve ID[@ATTEMPT] "},
		{"reject", "keep reject ID[@ATTEMPT]\n"},
		{"resolve", "keep resolve ID[@ATTEMPT] try-again|happened|not-happened|skip\n"},
		{"resume", "keep resume WORKFLOW[@N]\n"},
	} {
		if r := e.ok("help", c[0]); !strings.Contains(r.stdout, "usage: "+c[1]) {
			t.Errorf("keep help %s: want the usage line %q, got:\n%s", c[0], c[1], r.stdout)
		}
	}
	e.deployLines()
	for _, args := range [][]string{{"approve", "7@2"}, {"reject", "7@2"}, {"resolve", "7@2", "skip"}} {
		if r := e.expect(1, args...); !strings.Contains(r.stderr, "not found") {
			t.Errorf("keep %s: want the id taken and not found, got %s", strings.Join(args, " "), r)
		}
	}
}
