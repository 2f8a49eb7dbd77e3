package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/api"
	"keep/storage"
)

// TestYearOfUse drives gc, backup, restore and version through the real
// binary, beside a real daemon and without one.
func TestYearOfUse(t *testing.T) {
	t.Parallel()

	t.Run("version names the binary's schema and the database's", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		r := e.ok("version")
		if !strings.Contains(r.stdout, "schema version "+strconv.Itoa(storage.SchemaVersion())) || !strings.Contains(r.stdout, "not created yet") {
			t.Fatalf("version before any database: %s", r)
		}
		e.deployLines()
		var v struct {
			SchemaVersion   int `json:"schema_version"`
			DatabaseVersion int `json:"database_schema_version"`
		}
		if err := json.Unmarshal([]byte(e.ok("version", "--json").stdout), &v); err != nil ||
			v.SchemaVersion != storage.SchemaVersion() || v.DatabaseVersion != v.SchemaVersion {
			t.Fatalf("version --json = %+v (%v)", v, err)
		}
	})

	t.Run("init writes the retention defaults", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		dir := filepath.Join(e.dir, "fresh")
		e.ok("init", dir)
		b, err := os.ReadFile(filepath.Join(dir, "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"[retention]", `traces = "720h0m0s"`, `runs = "720h0m0s"`, `compact_payloads_after = ""`, "log_max_mb = 10"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("keep init's config lacks %s:\n%s", want, b)
			}
		}
		e.ok("--config", filepath.Join(dir, "config.toml"), "version") // and it loads
	})

	t.Run("gc, backup and restore with and without a daemon", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.writeConfig("[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [\"" + e.root + "\"]\n\n" +
			"[retention]\ntraces = \"1h\"\nruns = \"1h\"\n")
		e.deployLines()
		e.ok("drain")
		inputs := jsonOf[[]api.InputView](e, "inputs", "lines")
		if len(inputs) != 2 || inputs[0].Status != api.InputDone {
			t.Fatalf("inputs before gc: %+v", inputs)
		}
		if r := e.ok("gc"); !strings.Contains(r.stdout, "pruned") {
			t.Fatalf("gc: %s", r)
		}

		d := startDaemon(t, e)
		awaitSocket(t, e, d, 30*time.Second)
		rep := jsonOf[storage.GCReport](e, "gc")
		if rep.BytesBefore == 0 {
			t.Fatalf("gc through the daemon: %+v", rep)
		}
		backup := filepath.Join(e.dir, "backup.db")
		e.ok("backup", backup)
		if r := e.expect(3, "restore", backup); !strings.Contains(r.stderr, "daemon") {
			t.Fatalf("restore beside a daemon should say why: %s", r)
		}
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-d.exited:
			if err != nil {
				t.Fatalf("daemon exit: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("daemon did not stop")
		}

		// a new note after the backup; the restore takes the database back
		e.file(e.root, "inbox/c.txt", "gamma")
		e.ok("run-now", "lines")
		e.ok("drain")
		if n := len(jsonOf[[]api.InputView](e, "inputs", "lines")); n != 3 {
			t.Fatalf("%d inputs before restore, want 3", n)
		}
		e.ok("restore", backup)
		after := jsonOf[[]api.InputView](e, "inputs", "lines")
		if len(after) != 2 {
			t.Fatalf("%d inputs after restoring the backup, want its 2", len(after))
		}
		for i, in := range after {
			if in.Status != api.InputDone || len(in.Outputs) != 1 || in.Outputs[0].Status != "applied" {
				t.Fatalf("input %d after restore: %+v, want done with its output", i, in)
			}
		}
		e.expect(1, "restore", filepath.Join(e.dir, "lines.js"))
	})
}

// TestService installs keep as a user service through the real binary with
// a recording systemctl on PATH: the machine's edge.
func TestService(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the systemd unit is Linux's; the launchd plist is golden-tested in engine/service")
	}
	e := newEnv(t, "allow")
	fake := filepath.Join(e.dir, "fakebin")
	if err := os.MkdirAll(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(e.dir, "systemctl.calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\ncase \"$*\" in *show*) echo ActiveState=active; echo 'ActiveEnterTimestamp=Mon 2026-11-23 13:00:05 UTC';; esac\n"
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		t.Helper()
		cmd := e.command(t.Context(), args...)
		for i, kv := range cmd.Env {
			if strings.HasPrefix(kv, "PATH=") {
				cmd.Env[i] = "PATH=" + fake + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
			}
		}
		r := runCmd(t, cmd)
		if r.code != 0 {
			t.Fatalf("keep %v: %s", args, r)
		}
		return r
	}
	run("service", "install")
	unit, err := os.ReadFile(filepath.Join(e.dir, "xdg-config", "systemd", "user", "keep.service"))
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := filepath.EvalSymlinks(keepBin)
	if want := "ExecStart=" + bin + " --daemon --db " + e.db + " --config " + e.config; !strings.Contains(string(unit), want) {
		t.Fatalf("unit lacks %q:\n%s", want, unit)
	}
	if r := run("service", "status"); !strings.Contains(r.stdout, "running since") {
		t.Fatalf("status: %s", r)
	}
	run("service", "uninstall")
	b, _ := os.ReadFile(calls)
	want := "--user daemon-reload\n--user enable --now keep.service\n--user show -p ActiveState,ActiveEnterTimestamp,MainPID keep.service\n" +
		"--user disable --now keep.service\n--user daemon-reload\n"
	if string(b) != want {
		t.Fatalf("systemctl calls:\n%s\nwant:\n%s", b, want)
	}
	if r := e.expect(2, "service", "reinstall"); !strings.Contains(r.stderr, "reinstall") {
		t.Fatalf("an unknown action: %s", r)
	}
}
