package clitest

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/engine/config"
)

// blocks are the fenced code blocks of one language in a markdown text.
func blocks(text, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeWorkflowsValidate: every whole workflow file the README and the
// authoring guide show is one keep validates, with the real binary, as a
// reader pasting it would run it; and the README's watched variant of its
// first workflow too.
func TestReadmeWorkflowsValidate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.file(e.root, "inbox/.keep", "")
	n := 0
	for _, name := range []string{"README.md", filepath.Join("workflows", "README.md")} {
		for i, src := range blocks(readDoc(t, name), "js") {
			if !strings.Contains(src, "Keep.workflow(") {
				continue // a snippet of a handler, not a file
			}
			n++
			f := e.file(e.dir, filepath.Join("blocks", strings.ReplaceAll(name, "/", "_")+"-"+string(rune('a'+i))+".js"), src)
			if r := e.keep("validate", f); r.code != 0 {
				t.Errorf("%s, code block %d does not validate:\n%s\n%s", name, i+1, src, r)
			}
		}
	}
	if n < 2 {
		t.Fatalf("found %d whole workflows in the READMEs, want the first workflow and the guide's", n)
	}
	first := blocks(section(t, readDoc(t, "README.md"), "A first workflow"), "js")[0]
	const interval, watched = `schedule: { interval: "5m" }`, `schedule: { watch: "inbox", interval: "5m" }`
	if !strings.Contains(first, interval) || !strings.Contains(section(t, readDoc(t, "README.md"), "A first workflow"), watched) {
		t.Fatalf("the first workflow no longer says %s, then %s", interval, watched)
	}
	f := e.file(e.dir, "watched.js", strings.Replace(first, interval, watched, 1))
	if r := e.keep("validate", f); r.code != 0 {
		t.Errorf("the first workflow with %s does not validate: %s", watched, r)
	}
}

// TestReadmeFirstWorkflowDoesWhatItSays: the README's first workflow, as
// written, turns a note in the inbox into a line of log.csv once it is
// approved, and after `keep grant notes files.append` without asking.
func TestReadmeFirstWorkflowDoesWhatItSays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	first := blocks(section(t, readDoc(t, "README.md"), "A first workflow"), "js")[0]
	wf := e.file(e.dir, "notes.js", first)
	e.file(e.root, "inbox/a.txt", "first note")
	e.ok("validate", wf)
	e.ok("deploy", wf)
	e.ok("drain")
	approvals := attentionOf(e, api.AttentionApproval)
	if len(approvals) != 1 || approvals[0].Workflow != "notes" || approvals[0].Title != "Log a.txt" {
		t.Fatalf("after a drain, approvals = %+v, want one, Log a.txt", approvals)
	}
	if got := e.read("log.csv"); got != "" {
		t.Fatalf("log.csv = %q before the approval", got)
	}
	e.ok("approve", approvals[0].ID)
	e.ok("drain")
	if got := e.read("log.csv"); got != "a.txt\n" {
		t.Fatalf("log.csv = %q after the approval, want a.txt", got)
	}
	e.ok("grant", "notes", "files.append")
	e.file(e.root, "inbox/b.txt", "second note")
	e.ok("run-now", "notes")
	e.ok("drain")
	if got := e.read("log.csv"); got != "a.txt\nb.txt\n" {
		t.Fatalf("log.csv = %q after the grant, want a.txt and b.txt", got)
	}
	if a := attentionOf(e, api.AttentionApproval); len(a) != 0 {
		t.Fatalf("after the grant, approvals = %+v", a)
	}
}

// TestReadmeConfigExamplesLoad: every config snippet of the README is one
// keep reads on its own (unknown keys and bad values are refused), and all
// of them together make a config the connectors start on (an account a
// snippet names is defined by another).
func TestReadmeConfigExamplesLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	snippets := blocks(readDoc(t, "README.md"), "toml")
	if len(snippets) < 5 {
		t.Fatalf("found %d config snippets in the README", len(snippets))
	}
	var whole []string
	for i, s := range snippets {
		cfg := e.file(e.dir, filepath.Join("snippets", string(rune('a'+i))+".toml"), s)
		if r := e.raw("--db", e.db, "--config", cfg, "auth", "list"); r.code != 0 {
			t.Errorf("README config snippet %d is refused:\n%s\n%s", i+1, s, r)
		}
		if !strings.Contains(s, "[mcp.") { // an MCP server starts when the connectors do
			whole = append(whole, s)
		}
	}
	cfg := e.file(e.dir, "whole.toml", strings.Join(whole, "\n"))
	wf := e.file(e.dir, "notes.js", blocks(section(t, readDoc(t, "README.md"), "A first workflow"), "js")[0])
	if r := e.raw("--db", e.db, "--config", cfg, "validate", wf); r.code != 0 {
		t.Errorf("the README's config snippets together:\n%s\n%s", strings.Join(whole, "\n"), r)
	}
}

// configKeys are the config file's tables and keys, from the struct keep
// decodes it into: "[policy]" and "min_wake", a map's entries as NAME.
func configKeys(t reflect.Type, table string, tables map[string]bool, keys map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		name := tag
		if table != "" {
			name = table + "." + tag
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct && tagged(ft.Elem()):
			entry := name + ".NAME"
			if tag == "hosts" {
				entry = name + `."HOST"`
			}
			tables["["+entry+"]"] = true
			configKeys(ft.Elem(), entry, tables, keys)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			tables["[["+name+"]]"] = true
			configKeys(ft.Elem(), name, tables, keys)
		case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(config.Duration{}):
			configKeys(ft, name, tables, keys)
			if leaves(ft) {
				tables["["+name+"]"] = true
			}
		default:
			keys[name] = tag
		}
	}
}

// tagged says a struct is decoded field by field (not by a method of its own).
func tagged(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("toml"); tag != "" && tag != "-" {
			return true
		}
	}
	return false
}

// leaves says a table holds keys of its own, not only tables.
func leaves(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag := f.Tag.Get("toml"); tag == "" || tag == "-" {
			continue
		}
		if k := f.Type.Kind(); k != reflect.Struct || f.Type == reflect.TypeOf(config.Duration{}) {
			if k != reflect.Map && k != reflect.Slice || f.Type.Elem().Kind() != reflect.Struct || !tagged(f.Type.Elem()) {
				return true
			}
		}
	}
	return false
}

// TestReadmeNamesEveryConfigKey: the README's Configuration section names
// every table and key keep reads, so a key added to the config is
// documented where a user looks; and the config keep init writes points
// there, not at a document the repository does not have.
func TestReadmeNamesEveryConfigKey(t *testing.T) {
	t.Parallel()
	conf := section(t, readDoc(t, "README.md"), "Configuration")
	tables, keys := map[string]bool{}, map[string]string{}
	configKeys(reflect.TypeOf(config.Config{}), "", tables, keys)
	if len(keys) < 60 {
		t.Fatalf("found %d config keys: the walk is wrong", len(keys))
	}
	for table := range tables {
		if !strings.Contains(conf, "`"+table+"`") {
			t.Errorf("the README's Configuration does not name %s", table)
		}
	}
	for full, key := range keys {
		if !strings.Contains(conf, "`"+key+"`") {
			t.Errorf("the README's Configuration does not name %s", full)
		}
	}

	e := newEnv(t, "ask")
	dir := filepath.Join(e.dir, "fresh")
	e.ok("init", dir)
	written, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(written), "DESIGN.md") || !strings.Contains(string(written), "README.md, Configuration") {
		t.Errorf("keep init's config points elsewhere than the README:\n%s", written)
	}
	for _, line := range strings.Split(string(written), "\n") {
		key, _, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if ok && !strings.HasPrefix(key, "#") && !strings.Contains(conf, "`"+key+"`") {
			t.Errorf("keep init writes %s, which the README's Configuration does not name", key)
		}
	}
	if r := e.ok("help", "init"); !strings.Contains(r.stdout, "keep.d.ts") {
		t.Errorf("keep help init does not say it writes keep.d.ts:\n%s", r.stdout)
	}
}
