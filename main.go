// Command keep is a local automation host: it runs workflow files durably
// against the user's own mail, files, spreadsheets and web services.
//
// This file is the whole command line (DESIGN.md §5): global flags, a table
// of sub-commands, and the human and --json output. How a process gets hold
// of the engine (through the daemon that holds the database, or in-process)
// is engine/daemon's Site, which the TUI, the daemon and every command share.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/term"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/benchmark"
	"keep/engine/daemon"
	"keep/tui"
	"keep/workflows"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// Every handler phase builds a goja runtime and drops it: most of
		// what keep allocates is garbage at once. Collecting at nine times
		// the live heap instead of twice took a sixth off a consumer run on
		// two cores (keep bench: GOGC 400 a tenth, 800 another 6%). The
		// live heap is a few MB; the heap watchdog's limit (256 MiB of
		// growth in one run) stays far above what this lets pile up.
		debug.SetGCPercent(800)
		if os.Getenv("GOMEMLIMIT") == "" {
			// and collecting sooner once the process holds 48 MiB, so a
			// live heap that grows does not take nine times itself (keep
			// bench's rss_mb)
			debug.SetMemoryLimit(48 << 20)
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// One thread runs keep's Go code. The engine's work is a chain of
		// short hand-offs between goroutines (the step, a run, its writes,
		// a frame from a worker); with a second P each hand-off woke
		// another thread that spun looking for work and slept again (a
		// futex each way, an interrupt between cores on a VM), a tenth
		// of an item's CPU on Node-RED's job. What runs in parallel are
		// the scripts, in worker processes sized to the cores, and the
		// waits (the sync, the network), which give the thread up.
		runtime.GOMAXPROCS(1)
	}
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	if daemon.ReexecNote != "" {
		daemon.Reexec(daemon.ReexecNote) // returns only if it could not
	}
	os.Exit(code)
}

// Exit codes (DESIGN.md §5).
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitRefused = 3
)

// ---------------------------------------------------------------------------
// Errors and exit codes

// usageError is a mistake in how keep was called: exit 2 with a usage line.
type usageError struct {
	msg   string
	usage string // the usage line of the command, or of keep
}

func (e *usageError) Error() string { return e.msg }

// refusedError is a refusal decided by the CLI itself (e.g. drain while a
// daemon holds the database): exit 3.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// reportedError has already been printed (validation diagnostics); it only
// carries the exit code.
type reportedError struct{ code int }

func (e *reportedError) Error() string { return "reported" }

// exitCode maps an error to the exit code of DESIGN.md §5.
func exitCode(err error) int {
	var ue *usageError
	var re *refusedError
	var le *engine.LockedError
	var rep *reportedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &rep):
		return rep.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &re), errors.As(err, &le), errors.Is(err, engine.ErrRefused):
		return exitRefused
	default:
		return exitFailed
	}
}

// report prints err the way the contract says and returns its exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	var ue *usageError
	var rep *reportedError
	switch {
	case errors.As(err, &rep):
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "keep: %s\n", ue.msg)
		usage := ue.usage
		if usage == "" {
			usage = globalUsage
		}
		fmt.Fprintf(stderr, "usage: %s\n", usage)
		if ue.usage == "" || ue.usage == globalUsage {
			fmt.Fprintln(stderr, "run 'keep help' for the list of commands")
		}
	default:
		fmt.Fprintf(stderr, "keep: %s\n", err)
	}
	return code
}

// ---------------------------------------------------------------------------
// The command table

const globalUsage = "keep [--db PATH] [--config PATH] [--daemon | COMMAND [ARGS]]"

// opts holds every flag a sub-command may take; each command registers only
// its own (command.flags).
type opts struct {
	args    []string
	json    bool
	name    string
	topic   string
	status  string
	run     string
	scope   string
	mode    string
	limit   int
	always  bool
	wide    bool
	timeout time.Duration
	device  bool // keep auth login --device
	force   bool // keep auth login --force

	producer  string // try
	out       string // new, edit
	withReads bool   // new, edit: perform the dry run's reads
	propose   bool   // edit: propose the draft instead of writing it

	httpAddr     string // mcp serve --http
	tokenAccount string // mcp serve --token-account
	public       bool   // mcp serve --public
}

type command struct {
	name    string
	args    string // what follows the name in the usage line
	summary string
	// minArgs and maxArgs bound the positional arguments (maxArgs -1: any).
	minArgs, maxArgs int
	flags            func(fs *flag.FlagSet, o *opts)
	run              func(ctx context.Context, c *cli, o *opts) error
	// subs are the rows of `keep NAME SUB ...`: each has its own arguments,
	// flags and help, checked like any command's; a command with subs has
	// no run of its own.
	subs   []*command
	parent *command
}

// path is the command's words after keep: "auth login".
func (cmd *command) path() string {
	if cmd.parent != nil {
		return cmd.parent.path() + " " + cmd.name
	}
	return cmd.name
}

func (cmd *command) usage() string {
	if len(cmd.subs) > 0 {
		alts := make([]string, len(cmd.subs))
		for i, sub := range cmd.subs {
			alts[i] = strings.TrimSpace(sub.name + " " + sub.args)
		}
		return "keep " + cmd.path() + " " + strings.Join(alts, " | ")
	}
	u := "keep " + cmd.path()
	if cmd.args != "" {
		u += " " + cmd.args
	}
	return u
}

func (cmd *command) sub(name string) *command {
	for _, s := range cmd.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (cmd *command) subNames() string {
	names := make([]string, len(cmd.subs))
	for i, s := range cmd.subs {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// resolve follows args to the sub-command they name: the first word that
// is not a flag nor the value of --db or --config. Without one, the parent
// is returned (its --help prints its rows; anything else is a usage error
// once flags are parsed).
func resolve(cmd *command, args []string) (*command, []string, error) {
	for len(cmd.subs) > 0 {
		i := firstWord(args)
		if i < 0 {
			return cmd, args, nil
		}
		sub := cmd.sub(args[i])
		if sub == nil {
			return nil, nil, &usageError{msg: fmt.Sprintf("unknown %s command %q (one of %s)", cmd.path(), args[i], cmd.subNames()), usage: cmd.usage()}
		}
		args = append(args[:i:i], args[i+1:]...)
		cmd = sub
	}
	return cmd, args, nil
}

func firstWord(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case len(a) > 1 && a[0] == '-':
			if name := strings.TrimLeft(a, "-"); name == "db" || name == "config" {
				i++ // its value (--db=PATH is one word)
			}
		default:
			return i
		}
	}
	return -1
}

// withSubs links each row of subs to its parent.
func withSubs(cmd *command, subs ...*command) *command {
	for _, s := range subs {
		s.parent = cmd
	}
	cmd.subs = subs
	return cmd
}

func jsonFlag(fs *flag.FlagSet, o *opts) {
	fs.BoolVar(&o.json, "json", false, "print JSON (one array or object)")
}

func withJSON(more func(fs *flag.FlagSet, o *opts)) func(fs *flag.FlagSet, o *opts) {
	return func(fs *flag.FlagSet, o *opts) {
		jsonFlag(fs, o)
		if more != nil {
			more(fs, o)
		}
	}
}

var commands []*command

func init() {
	// Assigned in init: the help command lists the table it is part of.
	commands = []*command{
		{name: "help", args: "[COMMAND [SUB] | api [CONNECTOR] [--json]]", summary: "show this help, a command's, or the scripting reference (api)",
			maxArgs: 2, run: cmdHelp, flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.json, "json", false, "with api only: print the reference as JSON (one object)")
			}},
		{name: "init", args: "[DIR]", summary: "write a config file with the defaults (DIR/config.toml, else the default path), and beside it workflows/: the examples, keep.d.ts, jsconfig.json; where a config is there, refresh keep.d.ts only",
			maxArgs: 1, run: cmdInit},
		{name: "validate", args: "FILE", summary: "check a workflow file; prints file:line:col: message per problem, else what it may call and reach",
			minArgs: 1, maxArgs: 1, run: cmdValidate},
		{name: "deploy", args: "FILE [--name NAME] [--json]", summary: "validate and store a new version of a workflow with its manifest (what it may call and reach)",
			minArgs: 1, maxArgs: 1, run: cmdDeploy, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.name, "name", "", "workflow name (default: the name in the file)")
			})},
		{name: "try", args: "FILE [--producer P] [--limit N] [--json]",
			summary: "dry-run a workflow on a throw-away copy: real reads, every mutation shown instead of performed",
			minArgs: 1, maxArgs: 1, run: cmdTry, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.producer, "producer", "", "run only this producer")
				countVar(fs, &o.limit, "limit", fmt.Sprintf("stop after this many mutations (0: %d)", api.DefaultTryLimit))
			})},
		{name: "new", args: `"DESCRIPTION" [-o FILE] [--with-reads]`, summary: "draft a workflow with the [llm] model; validated and dry-run, never deployed",
			minArgs: 1, maxArgs: 1, run: cmdNew, flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.out, "o", "", "write the draft here (default: NAME.js in this folder)")
				fs.BoolVar(&o.withReads, "with-reads", false, "let the dry run read for real (default: reads are shown, not performed)")
			}},
		{name: "edit", args: `WORKFLOW "CHANGE" [-o FILE] [--with-reads] [--propose]`, summary: "redraft a deployed workflow (or a file) with the [llm] model; shows the diff, never deploys",
			minArgs: 2, maxArgs: 2, run: cmdEdit, flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.out, "o", "", "write the draft here (default: the file, or NAME.js in this folder)")
				fs.BoolVar(&o.withReads, "with-reads", false, "let the dry run read for real (default: reads are shown, not performed)")
				fs.BoolVar(&o.propose, "propose", false, "put the draft in Attention as a proposal (keep approve pN deploys it) instead of writing it")
			}},
		{name: "workflows", args: "[--json]", summary: "list workflows", run: listWorkflows, flags: withJSON(nil)},
		{name: "status", args: "WORKFLOW [--json]", summary: "one workflow in detail",
			minArgs: 1, maxArgs: 1, run: cmdStatus, flags: withJSON(nil)},
		{name: "run-now", args: "WORKFLOW", summary: "queue every producer of a workflow now",
			minArgs: 1, maxArgs: 1, run: cmdRunNow},
		{name: "bench", args: "[--json]", summary: "measure speed, cost and scale on a temporary database",
			run: cmdBench, flags: withJSON(nil)},
		{name: "drain", args: "[--timeout D]", summary: "run the engine until nothing is due now, then exit",
			run: cmdDrain, flags: func(fs *flag.FlagSet, o *opts) {
				o.timeout = 10 * time.Minute
				durationVar(fs, &o.timeout, "timeout", "give up after this long (default 10m)")
			}},
		{name: "inputs", args: "WORKFLOW [--limit N] [--json]", summary: "inputs and the outputs they caused, newest first",
			minArgs: 1, maxArgs: 1, run: listInputs, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				countVar(fs, &o.limit, "limit", "at most this many, newest first (0: all)")
			})},
		{name: "events", args: "WORKFLOW [--topic T] [--status S] [--limit N] [--json]", summary: "events of a workflow, newest first",
			minArgs: 1, maxArgs: 1, run: listEvents, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				countVar(fs, &o.limit, "limit", "at most this many, newest first (0: all)")
				fs.StringVar(&o.topic, "topic", "", "only events of this topic")
				oneOfVar(fs, &o.status, "status", "only events with this status", engine.EventStatuses())
			})},
		{name: "runs", args: "WORKFLOW [--limit N] [--json]", summary: "run records of a workflow, newest first",
			minArgs: 1, maxArgs: 1, run: listRuns, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				countVar(fs, &o.limit, "limit", "at most this many, newest first (0: all)")
			})},
		{name: "mutations", args: "WORKFLOW [--status S] [--json]", summary: "the mutation ledger of a workflow",
			minArgs: 1, maxArgs: 1, run: listMutations, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				oneOfVar(fs, &o.status, "status", "only mutations with this status", engine.MutationStatuses())
			})},
		{name: "attention", args: "[ID] [--json]", summary: "everything waiting for you; with ID, that item whole (every argument, a proposal's diff)",
			maxArgs: 1, run: cmdAttention, flags: withJSON(nil)},
		{name: "approve", args: "ID[@ATTEMPT] [--always [--wide]]",
			summary: "approve a mutation waiting for approval (this call; --always: always, for this scope), or accept a proposal (pN)",
			minArgs: 1, maxArgs: 1, run: cmdApprove, flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.always, "always", false, "also allow, from now on, calls in the scope the approval shows (its file, its host; a daily limit stays)")
				fs.BoolVar(&o.wide, "wide", false, "with --always: allow the whole capability, not only the approval's scope")
			}},
		{name: "reject", args: "ID[@ATTEMPT]", summary: "reject a mutation waiting for approval, or a proposal (pN)", minArgs: 1, maxArgs: 1, run: cmdReject},
		{name: "resolve", args: "ID[@ATTEMPT] try-again|happened|not-happened|skip",
			summary: "answer a reconciliation prompt: try-again checks again (check-again says the same), happened, not-happened sends the same call again under its key, skip",
			minArgs: 2, maxArgs: 2, run: cmdResolve},
		{name: "skip", args: "EVENT_ID...", summary: "mark pending events skipped", minArgs: 1, maxArgs: -1, run: cmdSkip},
		{name: "skip-input", args: "INPUT_ID", summary: "skip an input and the work it caused",
			minArgs: 1, maxArgs: 1, run: cmdSkipInput},
		{name: "pause", args: "WORKFLOW", summary: "stop scheduling a workflow", minArgs: 1, maxArgs: 1, run: onWorkflow(api.API.Pause, "paused %s")},
		{name: "resume", args: "WORKFLOW[@N]", summary: "resume a workflow", minArgs: 1, maxArgs: 1, run: onWorkflow(api.API.Resume, "resumed %s", "the workflow runs")},
		{name: "retry", args: "WORKFLOW[@N]", summary: "retry a blocked workflow", minArgs: 1, maxArgs: 1, run: onWorkflow(api.API.Retry, "retrying %s", "the workflow runs")},
		{name: "logs", args: "WORKFLOW [--run ID] [--json]", summary: "the trace of a run (default: the newest)",
			minArgs: 1, maxArgs: 1, run: cmdLogs, flags: withJSON(func(fs *flag.FlagSet, o *opts) {
				idVar(fs, &o.run, "run", "run id")
			})},
		{name: "grant", args: "WORKFLOW CAPABILITY [--scope S] [--mode M] [--limit N]",
			summary: "set a permission (capability is connector.method)", minArgs: 2, maxArgs: 2, run: cmdGrant,
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.scope, "scope", "", "scope of the grant")
				o.mode = string(engine.GrantAllow)
				oneOfVar(fs, &o.mode, "mode", "the grant's mode, "+string(engine.GrantAllow)+" by default", engine.GrantModes())
				countVar(fs, &o.limit, "limit", "calls a day in the grant's scope (0: no limit)")
			}},
		{name: "grants", args: "WORKFLOW [--json]", summary: "permissions of a workflow",
			minArgs: 1, maxArgs: 1, run: listGrants, flags: withJSON(nil)},
		withSubs(&command{name: "auth", summary: "sign in to the accounts of [accounts.*]; secrets go to credentials.json next to the config"},
			&command{name: "login", args: "NAME [--device] [--force]",
				summary: "sign in to an account, checked as keep auth test checks it; what waited for it resumes",
				minArgs: 1, maxArgs: 1, run: cmdAuthLogin, flags: func(fs *flag.FlagSet, o *opts) {
					fs.BoolVar(&o.device, "device", false, "sign in with a code on another device (no browser here)")
					fs.BoolVar(&o.force, "force", false, "keep the new secret even when its service refuses it and the stored one works, or is another user than the account's")
				}},
			&command{name: "list", args: "[--json]", summary: "the configured accounts and whether they are signed in",
				run: listAccounts, flags: withJSON(nil)},
			&command{name: "test", args: "NAME", summary: "check an account's sign-in against its service", minArgs: 1, maxArgs: 1, run: cmdAuthTest},
			&command{name: "logout", args: "NAME", summary: "forget an account's secrets", minArgs: 1, maxArgs: 1, run: cmdAuthLogout}),
		{name: "gc", args: "[--json]", summary: "apply [retention] now: prune old traces and finished runs, give space back",
			run: cmdGC, flags: withJSON(nil)},
		{name: "backup", args: "FILE", summary: "write a consistent copy of the database (also while the daemon runs)",
			minArgs: 1, maxArgs: 1, run: cmdBackup},
		{name: "restore", args: "FILE", summary: "replace the database with a backup (refused while an engine holds it)",
			minArgs: 1, maxArgs: 1, run: cmdRestore},
		{name: "version", args: "[--json]", summary: "the binary's version and schema version", run: cmdVersion, flags: withJSON(nil)},
		withSubs(&command{name: "mcp", summary: "MCP servers: an [mcp.NAME] server's tools, or keep itself as one"},
			&command{name: "tools", args: "NAME [--json]", summary: "an [mcp.NAME] server's tools (refreshes the cached list)",
				minArgs: 1, maxArgs: 1, run: listMCPTools, flags: withJSON(nil)},
			&command{name: "serve", args: "[--http ADDR [--token-account NAME] [--public]]", summary: "keep as an MCP server for your assistant: on stdio, or streamable HTTP behind a token",
				run: cmdMCPServe, flags: func(fs *flag.FlagSet, o *opts) {
					fs.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on ADDR (HOST:PORT, loopback unless --public) instead of stdio")
					fs.StringVar(&o.tokenAccount, "token-account", "mcp-serve", "the token account (keep auth login NAME) whose token HTTP clients must send")
					fs.BoolVar(&o.public, "public", false, "allow --http on an address beyond this machine")
				}}),
		withSubs(&command{name: "service", summary: "run keep --daemon as your user's service (systemd, launchd)"},
			&command{name: "install", summary: "install the service and start it; it starts at every login", run: cmdServiceInstall},
			&command{name: "uninstall", summary: "stop the service and remove it", run: cmdServiceUninstall},
			&command{name: "status", args: "[--json]", summary: "whether the service is installed and running",
				run: cmdServiceStatus, flags: withJSON(nil)}),
	}
}

// ---------------------------------------------------------------------------
// Flag values: a value a flag cannot take is a usage error (exit 2) naming
// the flag, never a silent "nothing matched" or a default.

// countVar is a whole number, 0 or more.
func countVar(fs *flag.FlagSet, p *int, name, usage string) {
	fs.Func(name, usage, func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return errors.New("want a whole number, 0 or more")
		}
		*p = n
		return nil
	})
}

// oneOfVar is one of values: the typed constants of a state, never a list
// written here (engine/literals_test.go scans this file).
func oneOfVar[T ~string](fs *flag.FlagSet, p *string, name, usage string, typed []T) {
	values := make([]string, len(typed))
	for i, v := range typed {
		values[i] = string(v)
	}
	fs.Func(name, usage+" ("+strings.Join(values, ", ")+")", func(s string) error {
		if !slices.Contains(values, s) {
			return fmt.Errorf("want one of %s", strings.Join(values, ", "))
		}
		*p = s
		return nil
	})
}

// durationVar is a Go duration longer than zero.
func durationVar(fs *flag.FlagSet, p *time.Duration, name, usage string) {
	fs.Func(name, usage, func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return errors.New(`want a duration longer than zero, e.g. "30s" or "5m"`)
		}
		*p = d
		return nil
	})
}

// idVar is an id as keep prints them: a whole number from 1.
func idVar(fs *flag.FlagSet, p *string, name, usage string) {
	fs.Func(name, usage, func(s string) error {
		if !isID(s) {
			return errors.New("want an id (a whole number from 1)")
		}
		*p = s
		return nil
	})
}

func isID(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

// idArgs checks positional ids (approve, reject, resolve, skip, skip-input);
// a mutation's may name the attempt it answers (ID@ATTEMPT).
func idArgs(cmd, what string, ids ...string) error {
	for _, id := range ids {
		n, attempt, at := strings.Cut(id, "@")
		if !isID(n) || at && (what != "mutation id" || !isID(attempt)) {
			return &usageError{msg: fmt.Sprintf("%s %q is not an id (a whole number from 1%s)", what, id, map[bool]string{true: ", or ID@ATTEMPT"}[what == "mutation id"]), usage: lookup(cmd).usage()}
		}
	}
	return nil
}

// pathVar is a path that is not empty.
func pathVar(p *string, set *bool) func(string) error {
	return func(s string) error {
		if s == "" {
			return errors.New("want a path")
		}
		*p = s
		if set != nil {
			*set = true
		}
		return nil
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Entry point and flag parsing

// cli is one invocation: its settings, its output, and what it opened.
type cli struct {
	stdout, stderr io.Writer
	jsonOut        io.Writer // stdout without the escaping writer: JSON is escaped as JSON
	dbPath         string
	configPath     string
	configSet      bool // --config was given: the file must exist

	// st is where this invocation opens the config, the log and the engine
	// (engine/daemon/site.go), made once the flags have named the paths
	st      *daemon.Site
	stdin   *bufio.Reader
	closers []func()
	// inProcess: api opened the engine here because nothing else runs it,
	// so what this command changes waits for an engine to start
	inProcess bool
}

// run is main without os.Exit.
func run(args []string, stdout, stderr io.Writer) int {
	// Everything printed for a person goes through printable: text a script
	// controls (titles, logs, errors, payloads) never reaches the terminal
	// as control characters. JSON goes out on its own path (printJSON).
	rawStdout := stdout
	out, errOut := tui.NewPrintableWriter(stdout), tui.NewPrintableWriter(stderr)
	defer out.Flush()
	defer errOut.Flush()
	stdout, stderr = out, errOut
	c := &cli{stdout: stdout, stderr: stderr, jsonOut: rawStdout}
	defer c.close()

	fs := flag.NewFlagSet("keep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.dbPath, c.configPath = daemon.DefaultDBPath(), engine.DefaultConfigPath()
	fs.Func("db", "database file", pathVar(&c.dbPath, nil))
	fs.Func("config", "config file", pathVar(&c.configPath, &c.configSet))
	asDaemon := fs.Bool("daemon", false, "run the engine without a UI until SIGINT/SIGTERM")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout)
			return exitOK
		}
		return report(stderr, &usageError{msg: tui.FlagError(err)})
	}
	rest := fs.Args()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// the first signal asks the command to finish; a second one ends keep
	// at once, whatever it is waiting on
	go func() { <-ctx.Done(); stop() }()

	if *asDaemon {
		if len(rest) > 0 {
			return report(stderr, &usageError{msg: "--daemon takes no command"})
		}
		return report(stderr, c.daemon(ctx))
	}
	if len(rest) == 0 {
		return report(stderr, c.tui(ctx))
	}

	cmd := lookup(rest[0])
	if cmd == nil {
		return report(stderr, &usageError{msg: fmt.Sprintf("unknown command %q", rest[0])})
	}
	cmd, args, err := resolve(cmd, rest[1:])
	if err != nil {
		return report(stderr, err)
	}
	o := &opts{}
	cfs := flag.NewFlagSet(cmd.path(), flag.ContinueOnError)
	cfs.SetOutput(io.Discard)
	// The global flags are accepted after the command too.
	cfs.Func("db", "database file", pathVar(&c.dbPath, nil))
	cfs.Func("config", "config file", pathVar(&c.configPath, &c.configSet))
	if cmd.flags != nil {
		cmd.flags(cfs, o)
	}
	pos, err := parseInterspersed(cfs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(stdout, cmd, cfs)
			return exitOK
		}
		if len(cmd.subs) == 0 {
			return report(stderr, &usageError{msg: tui.FlagError(err), usage: cmd.usage()})
		}
	}
	switch {
	case len(cmd.subs) > 0:
		return report(stderr, &usageError{msg: fmt.Sprintf("%s needs a sub-command: one of %s", cmd.path(), cmd.subNames()), usage: cmd.usage()})
	case len(pos) < cmd.minArgs:
		return report(stderr, &usageError{msg: "missing arguments", usage: cmd.usage()})
	case cmd.maxArgs >= 0 && len(pos) > cmd.maxArgs:
		return report(stderr, &usageError{msg: fmt.Sprintf("too many arguments: %s", strings.Join(pos[cmd.maxArgs:], " ")), usage: cmd.usage()})
	}
	o.args = pos
	err = cmd.run(ctx, c, o)
	// a mistake a command finds in its own arguments shows its usage line
	if ue := (*usageError)(nil); errors.As(err, &ue) && ue.usage == "" {
		ue.usage = cmd.usage()
	}
	return report(stderr, err)
}

// parseInterspersed parses flags wherever they appear among args (the
// standard flag package stops at the first positional) and returns the
// positionals. Everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n", globalUsage)
	fmt.Fprintln(w, "With no command, keep opens the terminal UI.")
	fmt.Fprintln(w, "\nGlobal flags:")
	fmt.Fprintln(w, "  --db PATH       database file ($KEEP_DB, else $XDG_DATA_HOME/keep/keep.db)")
	fmt.Fprintln(w, "  --config PATH   config file (default $XDG_CONFIG_HOME/keep/config.toml)")
	fmt.Fprintln(w, "  --daemon        run the engine without a UI until SIGINT/SIGTERM")
	fmt.Fprintln(w, "\nCommands:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, cmd := range commands {
		if len(cmd.subs) == 0 {
			fmt.Fprintf(tw, "  %s\t%s\n", cmd.usage(), cmd.summary)
		}
		for _, sub := range cmd.subs {
			fmt.Fprintf(tw, "  %s\t%s\n", sub.usage(), sub.summary)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nExit codes: 0 done, 1 failed, 2 usage, 3 refused.")
}

func printCommandHelp(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", cmd.usage(), cmd.summary)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(cmd.subs) > 0 {
		fmt.Fprintln(tw, "\nCommands:")
		for _, sub := range cmd.subs {
			fmt.Fprintf(tw, "  %s\t%s\n", sub.usage(), sub.summary)
		}
	}
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "db" || f.Name == "config" {
			return
		}
		if first {
			fmt.Fprintln(tw, "\nFlags:")
			first = false
		}
		// a one-letter flag is written as the usage line writes it: -o
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\n", dash, f.Name, f.Usage)
	})
	tw.Flush()
}

func cmdHelp(_ context.Context, c *cli, o *opts) error {
	if len(o.args) > 0 && o.args[0] == "api" {
		return cmdHelpAPI(c, o)
	} else if o.json {
		return &usageError{msg: "--json is for help api (the scripting reference); a command's help is text"}
	}
	if len(o.args) > 0 {
		cmd := lookup(o.args[0])
		if cmd == nil {
			return &usageError{msg: fmt.Sprintf("unknown command %q", o.args[0]), usage: globalUsage}
		}
		if len(o.args) == 2 {
			if cmd.sub(o.args[1]) == nil {
				return &usageError{msg: fmt.Sprintf("help takes one command, a command and its sub-command, or api [CONNECTOR]; %s has no sub-command %q",
					cmd.name, o.args[1]), usage: lookup("help").usage()}
			}
			cmd = cmd.sub(o.args[1])
		}
		fs := flag.NewFlagSet(cmd.path(), flag.ContinueOnError)
		if cmd.flags != nil {
			cmd.flags(fs, &opts{})
		}
		printCommandHelp(c.stdout, cmd, fs)
		return nil
	}
	printHelp(c.stdout)
	return nil
}

// ---------------------------------------------------------------------------
// The site: config, logging, accounts (engine/daemon/site.go)

// site is this invocation's database and config, and what it opened from
// them; closed with the rest of what the command opened.
func (c *cli) site() *daemon.Site {
	if c.st == nil {
		c.st = daemon.NewSite(daemon.SiteOpts{DBPath: c.dbPath, ConfigPath: c.configPath, ConfigSet: c.configSet, Stderr: c.stderr})
		c.onClose(c.st.Close)
	}
	return c.st
}

// config is the config file, loaded once.
func (c *cli) config() (engine.Config, error) { return c.site().Config() }

func (c *cli) onClose(f func()) { c.closers = append(c.closers, f) }

// close releases what this invocation opened, last first.
func (c *cli) close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

// logger writes to keep.log next to the database, never the terminal.
func (c *cli) logger() *slog.Logger { return c.site().Logger() }

// ---------------------------------------------------------------------------
// Getting hold of the engine (engine/daemon/acquire.go)

// api returns the daemon's client when a daemon holds the database, else an
// in-process engine on the database (closed when the command ends).
func (c *cli) api(ctx context.Context) (api.API, error) {
	got, err := c.site().Get(ctx, daemon.ForCommand)
	if err != nil {
		return nil, err
	}
	c.inProcess = got.Engine != nil
	return got.API, nil
}

// noEngine tells the person, on stderr so --json stays one value, that no
// engine runs the database and how to start one; what says what waits.
func (c *cli) noEngine(what string) {
	if !c.inProcess {
		return
	}
	fmt.Fprintf(c.stderr, "keep: no keep engine is running on %s: %s when one starts: keep --daemon (or keep service install, to run it from every login)\n", c.dbPath, what)
}

// attach connects to the daemon that holds the database, if one answers.
func (c *cli) attach() (api.API, bool) {
	client, ok := c.site().Attach()
	if !ok {
		return nil, false
	}
	return client, true
}

// openEngine opens an engine on the database here, not started.
func (c *cli) openEngine(ctx context.Context) (*engine.Engine, error) {
	got, err := c.site().Get(ctx, daemon.OpenHere)
	if err != nil {
		return nil, err
	}
	return got.Engine, nil
}

// loadOptions is what engine.LoadScript needs to check a file against the
// connectors of the config, with the tool lists of the MCP servers src names.
func (c *cli) loadOptions(src []byte) (engine.LoadOptions, error) { return c.site().LoadOptions(src) }

// ---------------------------------------------------------------------------
// keep (the TUI) and keep --daemon

func (c *cli) tui(ctx context.Context) error {
	logger := c.logger()
	got, err := c.site().Get(ctx, daemon.ForFrontEnd)
	if err != nil {
		return err
	}
	note := tui.StartupNote(ctx, got.API)
	demoInbox := ""
	// SIGHUP is the terminal hanging up: the TUI ends, and its engine
	// stops, as when the person quits (left running, it would hold the
	// database for nobody)
	ctx, hungUp := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer hungUp()
	if e := got.Engine; e != nil {
		// a config that changes ends this TUI cleanly; main starts keep
		// again on the new config (daemon.ReexecNote)
		var reload context.CancelFunc
		ctx, reload = context.WithCancel(ctx)
		defer reload()
		c.site().WatchConfig(ctx, e, reload, false)
		if demo, err := c.site().FirstRunDemo(ctx, e); err != nil {
			logger.Error("first-run demo", "err", err)
		} else if demo != "" {
			note = demo
		}
		if reloaded := daemon.ReloadedNote(); reloaded != "" {
			note = reloaded
		}
		// the demo alone: its folder stays named until a file is dropped there
		if wfs, err := e.Workflows(ctx); err == nil && len(wfs) == 1 && wfs[0].Name == "demo" {
			demoInbox = filepath.Join(c.site().DemoDir(), "inbox")
		}
	}
	runErr := tui.Run(ctx, got.API, tui.Options{Logger: logger, StartupNote: note, DemoInbox: demoInbox})
	return errors.Join(runErr, got.Stop(ctx, time.Minute))
}

// daemon runs the engine without a UI, serving other keep processes on the
// socket next to the database, until SIGINT or SIGTERM.
func (c *cli) daemon(ctx context.Context) error { return c.site().RunAsDaemon(ctx) }

// ---------------------------------------------------------------------------
// init, validate, deploy

// cmdInit writes a config file with every default and the workflows folder
// beside it; on a setup that has a config, it refreshes only what keep
// generates there (engine/authoring/setup.go).
func cmdInit(_ context.Context, c *cli, o *opts) error {
	path := c.configPath
	if len(o.args) == 1 {
		path = filepath.Join(o.args[0], "config.toml")
	}
	var examples []authoring.Example
	for _, wf := range workflows.All() {
		examples = append(examples, authoring.Example{Name: wf.Name, Source: wf.Source})
	}
	return authoring.Init(authoring.InitOpts{ConfigPath: path, Config: c.config, DBPath: c.dbPath, Logger: c.logger(),
		Out: c.stdout, Examples: examples})
}

// printValidation prints a validation error's diagnostics, one
// "file:line:col: message" line each, and returns the already-reported
// failure; other errors are returned as they are.
func printValidation(stderr io.Writer, err error) error {
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		for _, d := range ve.Diagnostics {
			fmt.Fprintln(stderr, d.String())
		}
		return &reportedError{code: exitFailed}
	}
	return err
}

// load reads and checks a workflow file as `keep validate` does; its
// diagnostics are already printed when it fails.
func (c *cli) load(file string) (*engine.Script, error) {
	src, err := engine.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lo, err := c.loadOptions(src)
	if err != nil {
		return nil, err
	}
	sc, err := engine.LoadScript(file, src, lo)
	if err != nil {
		return nil, printValidation(c.stderr, err)
	}
	return sc, nil
}

func cmdValidate(_ context.Context, c *cli, o *opts) error {
	file := o.args[0]
	sc, err := c.load(file)
	if err != nil {
		return err
	}
	c.site().WarnStaleEngine()
	w := sc.Workflow
	fmt.Fprintf(c.stdout, "%s: ok: workflow %q, %d topics, %d producers, %d consumers\n",
		file, w.Name, len(w.Topics), len(w.Producers), len(w.Consumers))
	if len(sc.Capabilities) > 0 {
		fmt.Fprintf(c.stdout, "mutates: %s\n", strings.Join(sc.Capabilities, ", "))
	}
	if reads := sc.Manifest.Names(false); len(reads) > 0 {
		fmt.Fprintf(c.stdout, "reads: %s\n", strings.Join(reads, ", "))
	}
	if m := sc.Manifest; m != nil && len(m.Hosts) > 0 {
		fmt.Fprintf(c.stdout, "hosts: %s\n", strings.Join(m.Hosts, ", "))
	}
	return nil
}

func cmdDeploy(ctx context.Context, c *cli, o *opts) error {
	file := o.args[0]
	if o.name != "" {
		if err := engine.CheckWorkflowName(o.name); err != nil {
			return &usageError{msg: "invalid value for --name: " + err.Error()}
		}
	}
	src, err := engine.ReadFile(file)
	if err != nil {
		return err
	}
	keepAPI, err := c.api(ctx)
	if err != nil {
		return err
	}
	res, err := keepAPI.Deploy(ctx, file, src, o.name)
	if err != nil {
		return printValidation(c.stderr, err)
	}
	if res.Capabilities == nil {
		res.Capabilities = []api.GrantView{}
	}
	c.noEngine(fmt.Sprintf("%s is stored and will run", res.Workflow))
	if o.json {
		return c.printJSON(res)
	}
	if res.Unchanged {
		fmt.Fprintf(c.stdout, "%s version %d unchanged: the file is what is deployed, so no new version\n", res.Workflow, res.Version)
		return nil
	}
	what := "updated"
	if res.Created {
		what = "created (active)"
	}
	fmt.Fprintf(c.stdout, "deployed %s version %d: %s\n", res.Workflow, res.Version, what)
	if m := res.Manifest; m != nil {
		// the rest of the manifest: all it may read and reach, besides
		// the mutations below
		fmt.Fprintf(c.stdout, "reads: %s\nhosts: %s\n", tui.Dash(strings.Join(m.Names(false), ", ")), tui.Dash(strings.Join(m.Hosts, ", ")))
	}
	if len(res.Capabilities) == 0 {
		fmt.Fprintln(c.stdout, "capabilities: none")
		return nil
	}
	fmt.Fprintln(c.stdout, "capabilities:")
	return tui.WriteGrants(c.stdout, res.Capabilities)
}

// ---------------------------------------------------------------------------
// Listings

// listing is the runner of a listing command: fetch, then --json (one
// array, never null) or the text writer; an empty list is said in words.
type listing[T any] struct {
	fetch func(ctx context.Context, c *cli, o *opts) ([]T, error)
	empty string // what an empty list prints ("": the writer's header)
	// waits is what waits for an engine, said when none runs the database
	waits string
	write func(w io.Writer, items []T) error
}

func (l listing[T]) run(ctx context.Context, c *cli, o *opts) error {
	items, err := l.fetch(ctx, c, o)
	if err != nil {
		return err
	}
	if l.waits != "" {
		c.noEngine(l.waits)
	}
	if o.json {
		return c.printJSON(orEmpty(items))
	}
	if len(items) == 0 && l.empty != "" {
		fmt.Fprintln(c.stdout, l.empty)
		return nil
	}
	return l.write(c.stdout, items)
}

// viaAPI fetches through the daemon, else an in-process engine.
func viaAPI[T any](fetch func(ctx context.Context, api api.API, o *opts) ([]T, error)) func(context.Context, *cli, *opts) ([]T, error) {
	return func(ctx context.Context, c *cli, o *opts) ([]T, error) {
		api, err := c.api(ctx)
		if err != nil {
			return nil, err
		}
		return fetch(ctx, api, o)
	}
}

// paged fetches a newest-first list of a workflow page by page (pages).
func paged[T any](id func(T) string, fetch func(ctx context.Context, api api.API, o *opts, p api.Page) ([]T, error)) func(context.Context, *cli, *opts) ([]T, error) {
	return viaAPI(func(ctx context.Context, keepAPI api.API, o *opts) ([]T, error) {
		return pages(o.limit, id, func(before int64, n int) ([]T, error) {
			return fetch(ctx, keepAPI, o, api.Page{Before: before, Limit: n})
		})
	})
}

// withWidth is a writer that wraps to the terminal's width.
func withWidth[T any](write func(io.Writer, []T, int) error) func(io.Writer, []T) error {
	return func(w io.Writer, items []T) error { return write(w, items, tui.TermWidth()) }
}

// The listing commands' runners, rows of the command table.
var (
	listWorkflows = listing[api.WorkflowView]{
		fetch: viaAPI(func(ctx context.Context, api api.API, _ *opts) ([]api.WorkflowView, error) {
			return api.Workflows(ctx)
		}),
		waits: "workflows run (NEXT RUN is when they would)",
		empty: "no workflows; deploy one with: keep deploy FILE", write: tui.WriteWorkflows,
	}.run
	listInputs = listing[api.InputView]{
		fetch: paged(func(in api.InputView) string { return in.InputID },
			func(ctx context.Context, api api.API, o *opts, p api.Page) ([]api.InputView, error) {
				ins, err := api.Inputs(ctx, o.args[0], p)
				for i := range ins {
					ins[i].Outputs = orEmpty(ins[i].Outputs)
				}
				return ins, err
			}),
		empty: "no inputs", write: tui.WriteInputs,
	}.run
	listEvents = listing[api.EventView]{
		fetch: paged(func(ev api.EventView) string { return ev.ID },
			func(ctx context.Context, keepAPI api.API, o *opts, p api.Page) ([]api.EventView, error) {
				evs, err := keepAPI.Events(ctx, o.args[0], api.EventFilter{Topic: o.topic, Status: o.status, Before: p.Before, Limit: p.Limit})
				for i := range evs {
					evs[i].CausedBy = orEmpty(evs[i].CausedBy)
				}
				return evs, err
			}),
		empty: "no events", write: tui.WriteEvents,
	}.run
	listRuns = listing[api.RunView]{
		fetch: paged(func(r api.RunView) string { return r.ID },
			func(ctx context.Context, api api.API, o *opts, p api.Page) ([]api.RunView, error) {
				return api.Runs(ctx, o.args[0], p)
			}),
		empty: "no runs", write: tui.WriteRuns,
	}.run
	listMutations = listing[api.MutationView]{
		fetch: viaAPI(func(ctx context.Context, api api.API, o *opts) ([]api.MutationView, error) {
			return api.Mutations(ctx, o.args[0], o.status)
		}),
		empty: "no mutations", write: withWidth(tui.WriteMutations),
	}.run
	listAttention = listing[api.AttentionItem]{
		fetch: viaAPI(func(ctx context.Context, api api.API, _ *opts) ([]api.AttentionItem, error) {
			items, err := api.Attention(ctx)
			for i := range items {
				items[i].Inputs = orEmpty(items[i].Inputs)
				items[i].Answers = orEmpty(items[i].Answers)
			}
			return items, err
		}),
		empty: "nothing needs your attention", write: withWidth(tui.WriteAttention),
	}.run
	listGrants = listing[api.GrantView]{
		fetch: viaAPI(func(ctx context.Context, api api.API, o *opts) ([]api.GrantView, error) {
			return api.Grants(ctx, o.args[0])
		}),
		empty: "no grants", write: tui.WriteGrants,
	}.run
	listAccounts = listing[engine.AccountStatus]{
		fetch: func(_ context.Context, c *cli, _ *opts) ([]engine.AccountStatus, error) {
			accts, err := c.accounts()
			if err != nil {
				return nil, err
			}
			return accts.Statuses()
		},
		empty: "no accounts are configured (add an [accounts.NAME] section to the config)", write: tui.WriteAccounts,
	}.run
	listMCPTools = listing[engine.MCPToolView]{
		fetch: func(ctx context.Context, c *cli, o *opts) ([]engine.MCPToolView, error) {
			reg, _, err := c.registry()
			if err != nil {
				return nil, err
			}
			tools, unknown, err := engine.MCPTools(ctx, reg, o.args[0])
			for _, r := range unknown {
				fmt.Fprintf(c.stderr, "warning: mcp.%s.reads names %q, which the server has no tool for\n", o.args[0], r)
			}
			return tools, err
		},
		write: tui.WriteMCPTools,
	}.run
)

func cmdStatus(ctx context.Context, c *cli, o *opts) error {
	keepAPI, err := c.api(ctx)
	if err != nil {
		return err
	}
	d, err := keepAPI.Workflow(ctx, o.args[0])
	if err != nil {
		return err
	}
	c.noEngine(d.Name + " runs only")
	d.Handlers = orEmpty(d.Handlers)
	for i := range d.Handlers {
		d.Handlers[i].Topics = orEmpty(d.Handlers[i].Topics)
	}
	if o.json {
		return c.printJSON(d)
	}
	return tui.WriteWorkflow(c.stdout, d)
}

// pageSize is what one request of a listing asks the engine for.
const pageSize = 1000

// pages reads a newest-first list page by page until it ends, or until
// limit items (0: no limit): the engine serves pages, the CLI lists all.
func pages[T any](limit int, id func(T) string, fetch func(before int64, n int) ([]T, error)) ([]T, error) {
	var all []T
	var before int64
	for {
		n := pageSize
		if limit > 0 {
			n = min(n, limit-len(all))
		}
		page, err := fetch(before, n)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < n || (limit > 0 && len(all) >= limit) {
			return all, nil
		}
		next, err := strconv.ParseInt(id(page[len(page)-1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("paging: id %q is not a number", id(page[len(page)-1]))
		}
		before = next
	}
}

func cmdLogs(ctx context.Context, c *cli, o *opts) error {
	keepAPI, err := c.api(ctx)
	if err != nil {
		return err
	}
	runView, err := engine.RunOf(ctx, keepAPI, o.args[0], o.run)
	if err != nil {
		return err
	}
	runID := runView.ID
	lines, err := keepAPI.Trace(ctx, runID)
	if err != nil {
		return err
	}
	if o.json {
		return c.printJSON(orEmpty(lines))
	}
	return tui.WriteTrace(c.stdout, runID, runView, lines)
}

// ---------------------------------------------------------------------------
// Operations

// action runs op and says done; later: what op left an absent engine to do.
func action(ctx context.Context, c *cli, op func(api.API) error, done string, later ...string) error {
	api, err := c.api(ctx)
	if err != nil {
		return err
	}
	if err := op(api); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, done)
	for _, l := range later {
		c.noEngine(l)
	}
	return nil
}

func cmdRunNow(ctx context.Context, c *cli, o *opts) error {
	wf := o.args[0]
	return action(ctx, c, func(api api.API) error { return api.RunNow(ctx, wf) }, "queued the producers of "+wf, "they run")
}

// onWorkflow is the runner of an operation on one workflow: op, then done
// with the workflow's name.
func onWorkflow(op func(api.API, context.Context, string) error, done string, later ...string) func(context.Context, *cli, *opts) error {
	return func(ctx context.Context, c *cli, o *opts) error {
		wf := o.args[0]
		return action(ctx, c, func(api api.API) error { return op(api, ctx, wf) }, fmt.Sprintf(done, wf), later...)
	}
}

// cmdAttention lists what waits for the person, or shows one item whole.
func cmdAttention(ctx context.Context, c *cli, o *opts) error {
	if len(o.args) == 0 {
		return listAttention(ctx, c, o)
	}
	id := o.args[0]
	keepAPI, err := c.api(ctx)
	if err != nil {
		return err
	}
	items, err := keepAPI.Attention(ctx)
	if err != nil {
		return err
	}
	// ids of different kinds may meet (mutation 12, run 12): every match
	var found []api.AttentionItem
	for _, it := range items {
		if it.ID == id {
			it.Arguments = api.Arguments(it.Params, 0)
			it.Inputs, it.Answers = orEmpty(it.Inputs), orEmpty(it.Answers)
			found = append(found, it)
		}
	}
	switch {
	case len(found) == 0:
		return fmt.Errorf("%w: nothing waiting has the id %s (keep attention lists them)", engine.ErrNotFound, id)
	case o.json:
		return c.printJSON(found)
	}
	return tui.WriteAttentionItems(c.stdout, found, tui.TermWidth())
}

func cmdApprove(ctx context.Context, c *cli, o *opts) error {
	id := o.args[0]
	if engine.IsProposalID(id) {
		return acceptProposal(ctx, c, id, o.always)
	}
	if err := idArgs("approve", "mutation id", id); err != nil {
		return err
	}
	if o.wide && !o.always {
		return &usageError{msg: "approve " + id + ": --wide widens --always; give both"}
	}
	keepAPI, err := c.api(ctx)
	if err != nil {
		return err
	}
	// the item as the card shows it, to name what each answer covers
	var item *api.AttentionItem
	if items, err := keepAPI.Attention(ctx); err == nil {
		for i := range items {
			if items[i].Kind == api.AttentionApproval && items[i].ID == id {
				item = &items[i]
			}
		}
	}
	switch {
	case o.wide:
		err = keepAPI.ApproveWide(ctx, id)
	default:
		err = keepAPI.Approve(ctx, id, o.always)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, tui.ApprovedWords(id, item, o.always, o.wide))
	return nil
}

func cmdReject(ctx context.Context, c *cli, o *opts) error {
	id := o.args[0]
	if engine.IsProposalID(id) {
		return action(ctx, c, func(api api.API) error { return api.RejectProposal(ctx, id) }, "rejected proposal "+id)
	}
	if err := idArgs("reject", "mutation id", id); err != nil {
		return err
	}
	return action(ctx, c, func(api api.API) error { return api.Reject(ctx, id) }, "rejected "+id)
}

// acceptProposal deploys a proposal; it grants nothing (--always has no
// meaning for it).
func acceptProposal(ctx context.Context, c *cli, id string, always bool) error {
	if always {
		return &usageError{msg: "approve " + id + ": --always is for mutations; accepting a proposal grants nothing"}
	}
	var res *api.DeployResult
	err := action(ctx, c, func(api api.API) (err error) { res, err = api.AcceptProposal(ctx, id); return err }, "accepted proposal "+id)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s is now version %d\n", res.Workflow, res.Version)
	// what the new version may do under grants made before it
	var used []api.GrantView
	for _, g := range res.Capabilities {
		if g.Used && g.Mode == engine.GrantAllow {
			used = append(used, g)
		}
	}
	if len(used) == 0 {
		fmt.Fprintln(c.stdout, "it uses none of your grants that allow calls")
		return nil
	}
	fmt.Fprintln(c.stdout, "it uses your grants:")
	return tui.WriteGrants(c.stdout, used)
}

func cmdResolve(ctx context.Context, c *cli, o *opts) error {
	id, answer := o.args[0], api.Answer(o.args[1])
	if err := idArgs("resolve", "mutation id", id); err != nil {
		return err
	}
	if answer == "check-again" {
		answer = api.TryAgain // what it does: the outcome is checked again, nothing is sent
	}
	switch answer {
	case api.TryAgain, api.Happened, api.NotHappened, api.SkipIt:
	default:
		// no y/n shorthand: "n" would be both "no" and "it did not happen"
		return &usageError{msg: fmt.Sprintf("unknown answer %q: one of %s (check again), %s, %s, %s", answer,
			api.TryAgain, api.Happened, api.NotHappened, api.SkipIt), usage: lookup("resolve").usage()}
	}
	later := map[api.Answer][]string{api.TryAgain: {"it is checked again"}, api.NotHappened: {"the call is sent again"}}[answer] // the scheduler's
	return action(ctx, c, func(api api.API) error { return api.Resolve(ctx, id, answer) },
		fmt.Sprintf("resolved %s: %s", id, answer), later...)
}

func cmdSkip(ctx context.Context, c *cli, o *opts) error {
	ids := o.args
	if err := idArgs("skip", "event id", ids...); err != nil {
		return err
	}
	return action(ctx, c, func(api api.API) error { return api.SkipEvents(ctx, ids) },
		"skipped events "+strings.Join(ids, ", "))
}

func cmdSkipInput(ctx context.Context, c *cli, o *opts) error {
	id := o.args[0]
	if err := idArgs("skip-input", "input id", id); err != nil {
		return err
	}
	return action(ctx, c, func(api api.API) error { return api.SkipInput(ctx, id) }, "skipped input "+id)
}

func cmdGrant(ctx context.Context, c *cli, o *opts) error {
	wf, capability := o.args[0], o.args[1]
	g := api.GrantView{Capability: capability, Scope: o.scope, Mode: engine.GrantMode(o.mode), DailyLimit: o.limit}
	done := fmt.Sprintf("%s: %s is now %s", wf, capability, o.mode)
	if o.scope != "" {
		done += " within " + o.scope
	}
	if o.limit > 0 {
		done += fmt.Sprintf(", at most %d a day", o.limit)
	}
	api, err := c.api(ctx)
	if err != nil {
		return err
	}
	released, err := api.GrantReleasing(ctx, wf, g)
	if err != nil {
		return err
	}
	if released > 0 {
		done += "; " + engine.ReleasedWords(released)
	}
	fmt.Fprintln(c.stdout, done)
	return nil
}

// cmdBench runs the measurements of engine/benchmark on temporary
// databases (never the user's) and prints one table or one JSON object.
func cmdBench(ctx context.Context, c *cli, o *opts) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	res, err := benchmark.Run(ctx, benchmark.Options{DaemonBinary: exe, Logf: func(format string, args ...any) {
		fmt.Fprintf(c.stderr, format+"\n", args...)
	}})
	if err != nil {
		return err
	}
	if o.json {
		return c.printJSON(res)
	}
	res.Table(c.stdout)
	return nil
}

// cmdDrain runs the in-process engine until nothing is due now. A daemon
// runs its workflows itself: draining beside it is refused.
func cmdDrain(ctx context.Context, c *cli, o *opts) error {
	if client, ok := c.attach(); ok {
		return &refusedError{msg: fmt.Sprintf("a keep daemon (pid %d) holds %s and runs its workflows itself; nothing to drain here",
			client.Info().PID, c.dbPath)}
	}
	e, err := c.openEngine(ctx)
	if err != nil {
		return err
	}
	dctx := ctx
	if o.timeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	if err := e.Drain(dctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("drain: still busy after %s: %v", o.timeout, err)
		}
		return fmt.Errorf("drain: %w", err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Output helpers

func (c *cli) printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := c.jsonOut.Write(tui.PrintableJSON(b.Bytes()))
	return err
}

// orEmpty makes a nil list marshal as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---------------------------------------------------------------------------
// keep auth (DESIGN.md §14)

// accounts opens the accounts of the config once.
func (c *cli) accounts() (*engine.AccountStore, error) { return c.site().Accounts() }

func cmdAuthLogin(ctx context.Context, c *cli, o *opts) error {
	return c.site().SignIn(ctx, o.args[0], daemon.SignInOpts{Out: c.stdout, ReadSecret: c.readSecret, Device: o.device, Force: o.force})
}

func cmdAuthTest(ctx context.Context, c *cli, o *opts) error {
	name := o.args[0]
	accts, err := c.accounts()
	if err != nil {
		return err
	}
	reg, cfg, err := c.registry()
	if err != nil {
		return err
	}
	checked, err := engine.TestAccount(ctx, cfg, reg, accts, name)
	for _, line := range checked {
		fmt.Fprintf(c.stdout, "%s: %s\n", name, line)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: ok\n", name)
	return nil
}

func cmdAuthLogout(ctx context.Context, c *cli, o *opts) error {
	name := o.args[0]
	accts, err := c.accounts()
	if err != nil {
		return err
	}
	warning, err := accts.Logout(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "signed out of %s\n", name)
	if warning != "" {
		fmt.Fprintf(c.stderr, "keep: %s\n", warning)
	}
	return nil
}

// readSecret asks on the terminal without echo, or reads one line of
// standard input when it is not a terminal (a script, a test).
func (c *cli) readSecret(prompt string) (string, error) {
	if term.IsTerminal(os.Stdin.Fd()) {
		fmt.Fprint(c.stderr, prompt)
		b, err := term.ReadPassword(os.Stdin.Fd())
		fmt.Fprintln(c.stderr)
		return string(b), err
	}
	if c.stdin == nil {
		c.stdin = bufio.NewReader(os.Stdin)
	}
	line, err := c.stdin.ReadString('\n')
	if errors.Is(err, io.EOF) && line != "" {
		err = nil
	}
	return strings.TrimRight(line, "\r\n"), err
}

// ---------------------------------------------------------------------------
// Authoring: help api, keep.d.ts, try, new, edit

// registry is the config's connectors, as the engine builds them, for the
// commands that run no engine on the database (help api, try, new, edit).
func (c *cli) registry() (*engine.Registry, engine.Config, error) { return c.site().Registry() }

func cmdHelpAPI(c *cli, o *opts) error {
	reg, _, err := c.registry()
	if err != nil {
		return err
	}
	name := ""
	if len(o.args) == 2 {
		name = o.args[1]
	}
	if help := engine.MCPHelp(reg, name); help != "" {
		_, err := io.WriteString(c.stdout, help)
		return err
	}
	engine.AwaitMCPServers(context.Background(), reg, name)
	ref := engine.BuildReference(reg)
	if len(o.args) == 2 {
		if ref, err = ref.Only(o.args[1]); err != nil {
			return &usageError{msg: err.Error(), usage: "keep help api [CONNECTOR] [--json]"}
		}
	}
	if o.json {
		return c.printJSON(ref)
	}
	return ref.WriteText(c.stdout)
}

// cmdMCPServe serves keep to an MCP client on stdin/stdout: through the
// daemon when one holds the database, else on an engine of its own that
// runs nothing (its views and dry runs only).
func cmdMCPServe(ctx context.Context, c *cli, flags *opts) error {
	var token string
	if flags.httpAddr != "" {
		if err := authoring.CheckServeAddr(flags.httpAddr, flags.public); err != nil {
			return err
		}
		accts, err := c.accounts()
		if err != nil {
			return err
		}
		how := fmt.Sprintf("add [accounts.%[1]s] kind = \"token\" to the config, run keep auth login %[1]s with a long random token, and give your assistant the same token", flags.tokenAccount)
		a, err := accts.Account(flags.tokenAccount)
		if err != nil {
			return fmt.Errorf("keep mcp serve --http needs a token: %s (%v)", how, err)
		}
		if a.Kind() != "token" {
			return fmt.Errorf("keep mcp serve --http: account %s is %s, not a token account: %s", flags.tokenAccount, a.Kind(), how)
		}
		if token, err = a.Secret(ctx); err != nil || token == "" {
			return fmt.Errorf("keep mcp serve --http needs a token: %s (%v)", how, err)
		}
		if err := authoring.CheckServeToken(token); err != nil {
			return fmt.Errorf("keep mcp serve --http: account %s: %w", flags.tokenAccount, err)
		}
	}
	// the engine is got hold of for each call only (authoring.PerCall)
	served := authoring.PerCall(func(ctx context.Context) (authoring.MCPServeAPI, func(), error) {
		site := c.mcpSite()
		got, err := site.Get(ctx, daemon.ForCommand)
		if err != nil {
			return nil, site.Close, err
		}
		return got.API, site.Close, nil
	})
	running := func() bool {
		site := c.mcpSite()
		defer site.Close()
		_, ok := site.Attach()
		return ok
	}
	// opened once now: what is wrong with the database is said at the start
	if _, err := served.Workflows(ctx); err != nil {
		return err
	}
	reg, cfg, err := c.registry()
	if err != nil {
		return err
	}
	o := authoring.MCPServeOpts{API: served, Registry: reg, Policy: engine.PolicyFrom(cfg.Policy), DB: c.dbPath, Running: running}
	// stdout is the protocol's: what it serves goes to stderr, which
	// clients show in their logs
	fmt.Fprintln(c.stderr, authoring.MCPServeWhere(o))
	if flags.httpAddr != "" {
		fmt.Fprintf(c.stderr, "keep mcp serve: streamable HTTP on http://%s/ for requests bearing the token of %s\n", flags.httpAddr, flags.tokenAccount)
		return authoring.ServeMCPHTTP(ctx, o, flags.httpAddr, token)
	}
	return authoring.ServeMCP(ctx, o)
}

// mcpSite is a site of this invocation's database and config, for one
// call of keep mcp serve.
func (c *cli) mcpSite() *daemon.Site {
	return daemon.NewSite(daemon.SiteOpts{DBPath: c.dbPath, ConfigPath: c.configPath, ConfigSet: c.configSet})
}

// cmdTry dry-runs a file. It never opens the database: the copy starts
// empty, and a daemon, if one answers, says which grants apply.
func cmdTry(ctx context.Context, c *cli, o *opts) error {
	file := o.args[0]
	sc, err := c.load(file)
	if err != nil {
		return err
	}
	reg, cfg, err := c.registry()
	if err != nil {
		return err
	}
	c.site().WarnStaleEngine()
	opts := api.TryOptions{Producer: o.producer, Limit: o.limit}
	if client, ok := c.attach(); ok {
		if grants, err := client.Grants(ctx, sc.Workflow.Name); err == nil {
			opts.Grants, opts.Deployed = grants, true
		}
	}
	rep, err := authoring.Try(ctx, reg, engine.PolicyFrom(cfg.Policy), file, sc.Source, opts)
	if err != nil {
		return printValidation(c.stderr, err)
	}
	if o.json {
		if err := c.printJSON(rep); err != nil {
			return err
		}
	} else {
		tui.WriteTryReport(c.stdout, rep, true)
	}
	if failed := rep.Failed(); len(failed) > 0 {
		// the report is the output; the exit code says a run failed in it
		fmt.Fprintf(c.stderr, "keep: %d run(s) of the dry run failed; the first: %s %s: %s\n", len(failed),
			failed[0].HandlerType, tui.PrintableLine(failed[0].Handler), tui.PrintableLine(failed[0].Error))
		return &reportedError{code: exitFailed}
	}
	return nil
}

// cmdNew drafts a workflow from a description with the [llm] model.
// renamed is err with its file name said as the file it was written to.
type renamed struct {
	err      error
	from, to string
}

func (r renamed) Error() string {
	if r.err == nil {
		return "still failing"
	}
	return strings.ReplaceAll(r.err.Error(), r.from, r.to)
}
func (r renamed) Unwrap() error { return r.err }

// draftName is the name a new draft is checked under, before keep new
// knows the file it writes it to.
const draftName = "draft.js"

func cmdNew(ctx context.Context, c *cli, o *opts) error {
	d, err := c.draft(ctx, authoring.DraftRequest{Description: o.args[0], FileName: draftName,
		Try: api.TryOptions{CaptureReads: !o.withReads}})
	if d == nil {
		return err
	}
	out := o.out
	if out == "" {
		out = draftName
		if d.Report != nil {
			out = d.Report.Workflow + ".js"
		}
	}
	f, ferr := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(ferr, os.ErrExist) {
		return errors.Join(err, &refusedError{msg: fmt.Sprintf("%s already exists; not overwriting it (give -o FILE)", out)})
	}
	if ferr != nil {
		return errors.Join(err, ferr)
	}
	if d.Invalid {
		// the model's draft was checked as draft.js: its problems are
		// the file's lines as written to out
		d.Problems = strings.ReplaceAll(d.Problems, draftName+":", out+":")
	}
	_, werr := f.WriteString(tui.DraftText(d))
	if werr := errors.Join(werr, f.Close()); werr != nil {
		return errors.Join(err, werr)
	}
	if d.Invalid {
		return fmt.Errorf("wrote the last draft to %s, marked as not working yet; fix it, then keep try %s: %w", out, out,
			renamed{err: err, from: draftName + ":", to: out + ":"})
	}
	fmt.Fprintf(c.stdout, "wrote %s (draft %d of at most %d; not deployed)\n\n", out, d.Rounds, authoring.DraftRounds)
	tui.WriteTryReport(c.stdout, d.Report, false)
	fmt.Fprintf(c.stdout, "\nnext: read it, keep try %s, then keep deploy %s\n", out, out)
	return nil
}

// cmdEdit redrafts a deployed workflow (or a workflow file) with a change.
// Of a deployed workflow, the dry run starts from its events, state and
// grants; a draft may not rename it. --propose hands the draft to
// Attention instead of writing it.
func cmdEdit(ctx context.Context, c *cli, o *opts) error {
	target, change := o.args[0], o.args[1]
	var current, fileName, out, name string
	var keepAPI api.API
	req := authoring.DraftRequest{Change: change, Try: api.TryOptions{CaptureReads: !o.withReads}}
	if src, err := engine.ReadFile(target); err == nil {
		current, fileName, out = string(src), target, target
		if sc, err := c.load(target); err == nil {
			name = sc.Workflow.Name
		}
		if o.propose {
			return &usageError{msg: "edit --propose: " + target + " is a file; --propose is for a deployed workflow"}
		}
	} else {
		if _, _, err := c.registry(); err != nil {
			return err
		}
		if _, err := c.site().Chat(); err != nil {
			return err
		}
		if keepAPI, err = c.api(ctx); err != nil {
			return err
		}
		if err := engine.CheckWorkflowName(target); err != nil {
			return &usageError{msg: "edit: " + target + " is no file, and " + err.Error()}
		}
		sv, err := keepAPI.Script(ctx, target)
		if err != nil {
			return err
		}
		// NAME.ts of one deployed from TypeScript: the draft is checked as
		// the file's kind, and .js would not load it
		current, fileName, name = sv.Source, filepath.Base(sv.FileName), sv.Workflow
		out = sv.Workflow + cmp.Or(filepath.Ext(fileName), ".js")
		if ct, ok := keepAPI.(authoring.ChangeTrier); ok {
			req.TryFn = func(ctx context.Context, file string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
				return ct.TryChange(ctx, sv.Workflow, file, src, opts)
			}
		}
	}
	if o.out != "" {
		out = o.out
	}
	// The file named to edit is rewritten; any other (NAME.js of a deployed
	// workflow, -o FILE) must not exist yet, as for keep new: a person's
	// own NAME.js is never overwritten. Checked before the model is asked,
	// and again when written.
	inPlace := out == fileName && current != "" && keepAPI == nil
	if !inPlace && !o.propose {
		if _, err := os.Lstat(out); err == nil {
			return &refusedError{msg: fmt.Sprintf("%s already exists; not overwriting it (give -o FILE)", out)}
		}
	}
	req.Current, req.FileName, req.Name = current, fileName, name
	d, err := c.draft(ctx, req)
	if d == nil {
		return err
	}
	if o.propose && !d.Invalid {
		v, err := keepAPI.Propose(ctx, api.ProposalRequest{Workflow: name, FileName: fileName, Source: []byte(d.Source),
			Origin: api.OriginEdit, Reason: "keep edit: " + change})
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "proposed %s for %s (draft %d of at most %d; not deployed)\n\n%s\nnext: keep approve %s, or keep reject %s\n",
			v.ID, name, d.Rounds, authoring.DraftRounds, engine.ProposalText(v), v.ID, v.ID)
		return nil
	}
	kept := ""
	if d.Invalid && inPlace {
		// A draft that still fails is no replacement for the person's
		// working file, and no diff was shown to undo it by: the file
		// stays, the draft goes beside it.
		kept, inPlace = out, false
		ext := filepath.Ext(out)
		out = strings.TrimSuffix(out, ext) + ".draft" + ext
	}
	if d.Invalid && out != fileName {
		// checked as fileName: its problems are the lines of out
		d.Problems = strings.ReplaceAll(d.Problems, fileName+":", out+":")
		err = renamed{err: err, from: fileName + ":", to: out + ":"}
	}
	diff := udiff.Unified(fileName, out, current, d.Source)
	if werr := writeDraft(out, tui.DraftText(d), inPlace); werr != nil {
		return errors.Join(err, werr)
	}
	if d.Invalid && kept != "" {
		return fmt.Errorf("wrote the last draft to %s, marked as not working yet (%s is as it was); fix it, then keep try %s: %w", out, kept, out, err)
	}
	if d.Invalid {
		return fmt.Errorf("wrote the last draft to %s, marked as not working yet; fix it, then keep try %s: %w", out, out, err)
	}
	if diff == "" {
		fmt.Fprintln(c.stdout, "the model changed nothing")
	}
	fmt.Fprint(c.stdout, diff)
	fmt.Fprintf(c.stdout, "\nwrote %s (draft %d of at most %d; not deployed)\n\n", out, d.Rounds, authoring.DraftRounds)
	tui.WriteTryReport(c.stdout, d.Report, false)
	fmt.Fprintf(c.stdout, "\nnext: keep deploy %s\n", out)
	return nil
}

// writeDraft writes a draft to out: over it when it is the file being
// edited, else only as a new file.
func writeDraft(out, text string, inPlace bool) error {
	if inPlace {
		return os.WriteFile(out, []byte(text), 0o600)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return &refusedError{msg: fmt.Sprintf("%s already exists; not overwriting it (give -o FILE)", out)}
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

// draft runs the drafting loop with the config's model and connectors.
func (c *cli) draft(ctx context.Context, req authoring.DraftRequest) (*authoring.Draft, error) {
	chat, err := c.site().Chat()
	if err != nil {
		return nil, err
	}
	reg, cfg, err := c.registry()
	if err != nil {
		return nil, err
	}
	req.Guide = workflows.Guide()
	return authoring.DraftWorkflow(ctx, chat, reg, engine.PolicyFrom(cfg.Policy), req)
}

// A year of use: gc, backup, restore, version, service

// cmdGC applies [retention] now: through the daemon (its policy) when one
// holds the database, else in-process.
func cmdGC(ctx context.Context, c *cli, o *opts) error {
	rep, err := c.site().GC(ctx)
	if err != nil {
		return err
	}
	if o.json {
		return c.printJSON(rep)
	}
	tui.WriteGC(c.stdout, rep)
	return nil
}

// cmdBackup writes a consistent copy: the daemon takes it when one holds
// the database; otherwise a snapshot is read directly (no engine needed:
// reading never takes the engine lock).
func cmdBackup(ctx context.Context, c *cli, o *opts) error {
	path, err := filepath.Abs(o.args[0])
	if err != nil {
		return err
	}
	// said before SQLite's "unable to open database file" can
	dir := filepath.Dir(path)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("backup: the folder %s does not exist; create it first (mkdir -p %s)", dir, dir)
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("backup: %s is not a folder", dir)
	}
	if err := c.site().Backup(ctx, path); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s\n", path)
	return nil
}

// cmdRestore replaces the database with a checked backup; refused (exit 3)
// while an engine holds it.
func cmdRestore(ctx context.Context, c *cli, o *opts) error {
	if client, ok := c.attach(); ok {
		return &refusedError{msg: fmt.Sprintf("a keep daemon (pid %d) holds %s; stop it before restoring", client.Info().PID, c.dbPath)}
	}
	if err := engine.RestoreDB(ctx, o.args[0], c.dbPath); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "restored %s from %s (the replaced database, if any, is %s.before-restore)\n", c.dbPath, o.args[0], c.dbPath)
	return nil
}

// version is set at build time (-ldflags "-X main.version=v1.2.3"); else
// the module version of the build, if any.
var version = ""

func cmdVersion(ctx context.Context, c *cli, o *opts) error {
	bi, _ := debug.ReadBuildInfo()
	v := engine.VersionOf(ctx, bi, version, c.dbPath)
	if o.json {
		return c.printJSON(v)
	}
	tui.WriteVersion(c.stdout, v)
	return nil
}

func cmdServiceInstall(ctx context.Context, c *cli, _ *opts) error {
	so, err := c.site().Service()
	if err != nil {
		return err
	}
	if err := c.site().Installable(ctx, &so); err != nil {
		return err
	}
	path, did, err := engine.InstallService(ctx, so)
	if err != nil {
		return err
	}
	switch did {
	case engine.ServiceUnchanged:
		fmt.Fprintf(c.stdout, "already installed and running: %s runs keep --daemon on %s, as it would be written now\n", path, so.DB)
		return nil
	case engine.ServiceRewritten:
		fmt.Fprintf(c.stdout, "rewrote %s (it ran another binary, database, config or environment) and restarted it: %s --daemon runs now and at every login\n", path, so.Binary)
	default:
		fmt.Fprintf(c.stdout, "installed %s: keep --daemon runs now and at every login\n", path)
	}
	if len(so.Env) > 0 {
		// names only: the values are secrets
		fmt.Fprintf(c.stdout, "it gets %s from this shell's environment\n", strings.Join(slices.Sorted(maps.Keys(so.Env)), ", "))
	}
	return nil
}

func cmdServiceUninstall(ctx context.Context, c *cli, _ *opts) error {
	so, err := c.site().Service()
	if err != nil {
		return err
	}
	path, removed, err := engine.UninstallService(ctx, so)
	if err != nil {
		return err
	}
	if !removed {
		fmt.Fprintf(c.stdout, "not installed: there is no %s\n", path)
		return nil
	}
	fmt.Fprintf(c.stdout, "removed %s\n", path)
	return nil
}

func cmdServiceStatus(ctx context.Context, c *cli, o *opts) error {
	so, err := c.site().Service()
	if err != nil {
		return err
	}
	st, err := engine.ServiceStatus(ctx, so)
	if err != nil {
		return err
	}
	if o.json {
		return c.printJSON(st)
	}
	return tui.WriteServiceState(c.stdout, st)
}
