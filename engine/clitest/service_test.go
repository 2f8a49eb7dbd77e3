package clitest

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

// TestServiceInstall: keep service install refuses what could not run as a
// service, and carries the variables the config reads secrets from.
func TestServiceInstall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fake := filepath.Join(e.dir, "fakebin")
	calls := filepath.Join(e.dir, "systemctl-calls")
	if err := os.MkdirAll(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\n"
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(e.dir, "xdg-config", "systemd", "user", "keep.service")
	envFile := filepath.Join(e.dir, "service.env") // beside the config
	install := func(bin string, env ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--db", e.db, "--config", e.config, "service", "install")
		cmd.Env = append(e.environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "KEEP_MAIL_PASSWORD=")
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = e.dir
		return runCmd(t, cmd)
	}
	nothingInstalled := func(what string) {
		t.Helper()
		if _, err := os.Stat(unit); err == nil {
			t.Errorf("%s: a unit was written", what)
		}
		if _, err := os.Stat(calls); err == nil {
			t.Errorf("%s: systemctl was called", what)
		}
	}

	t.Run("a binary go run built is refused with the way to install keep", func(t *testing.T) {
		cache := filepath.Join(e.dir, "gocache")
		bin := filepath.Join(cache, "3f", "keep")
		data, err := os.ReadFile(keepBin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		r := install(bin, "GOCACHE="+cache)
		if r.code != 3 || !strings.Contains(r.stderr, "go install") || !strings.Contains(r.stderr, "GOPATH)/bin") {
			t.Errorf("install from the build cache: %s", r)
		}
		nothingInstalled("a go run binary")
	})

	e.writeConfig(fmt.Sprintf("[connectors.files]\nroots = [%q]\n\n[connectors.mail]\nusername = \"ann@example.com\"\n", e.root))
	t.Run("a secret the config reads from an unset variable is refused, naming it", func(t *testing.T) {
		r := install(keepBin)
		if r.code != 3 || !strings.Contains(r.stderr, "KEEP_MAIL_PASSWORD") {
			t.Errorf("install without the mail password set: %s", r)
		}
		nothingInstalled("an unset variable")
	})

	t.Run("the variables set are carried in a file only the owner reads, never printed", func(t *testing.T) {
		const secret = "s3cr3t-pw"
		r := install(keepBin, "KEEP_MAIL_PASSWORD="+secret, "KEEP_LLM_API_KEY=llm-key")
		if r.code != 0 || !strings.Contains(r.stdout, "KEEP_LLM_API_KEY, KEEP_MAIL_PASSWORD") || strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("install: %s", r)
		}
		text, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "EnvironmentFile="+envFile) || strings.Contains(string(text), secret) {
			t.Errorf("unit:\n%s", text)
		}
		fi, err := os.Stat(envFile)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("env file %v: %v", fi, err)
		}
		env, _ := os.ReadFile(envFile)
		if !strings.Contains(string(env), `KEEP_MAIL_PASSWORD="`+secret+`"`) || !strings.Contains(string(env), `KEEP_LLM_API_KEY="llm-key"`) {
			t.Errorf("env file = %q", env)
		}
		got, _ := os.ReadFile(calls)
		if !strings.Contains(string(got), "--user enable --now keep.service") {
			t.Errorf("systemctl calls: %q", got)
		}
	})

	e.writeConfig(fmt.Sprintf("[connectors.files]\nroots = [%q]\n", e.root))
	t.Run("while another engine holds the database it is refused, naming it", func(t *testing.T) {
		os.Remove(calls)
		d := startDaemon(t, e)
		awaitSocket(t, e, d, time.Minute)
		r := install(keepBin)
		if r.code != 3 || !strings.Contains(r.stderr, fmt.Sprintf("pid %d", d.cmd.Process.Pid)) {
			t.Errorf("install beside a daemon: %s", r)
		}
		// asking whether that engine is the service's own is all it may do
		got, _ := os.ReadFile(calls)
		for _, call := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			if call != "" && !strings.HasPrefix(call, "--user show ") {
				t.Errorf("systemctl %s was called beside a running daemon", call)
			}
		}
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := kit.Wait(t, d.exited, kit.Timeout*6); err != nil {
			t.Errorf("daemon exit after SIGTERM: %v", err)
		}
	})
}

// TestVersion: keep version says the module version and the VCS revision
// Go recorded in the binary, and "(devel)" / "unknown" when it recorded none.
func TestVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	bi, err := buildinfo.ReadFile(keepBin)
	if err != nil {
		t.Fatal(err)
	}
	wantVersion, wantRev := bi.Main.Version, "unknown"
	if wantVersion == "" {
		wantVersion = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			wantRev = s.Value
		}
	}
	var v struct {
		Version, Commit string
	}
	r := e.ok("version", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != wantVersion || v.Commit != wantRev {
		t.Errorf("version --json = %+v, want %s %s", v, wantVersion, wantRev)
	}
	r = e.ok("version")
	if !strings.Contains(r.stdout, "keep "+wantVersion+", revision "+wantRev[:min(12, len(wantRev))]) {
		t.Errorf("version says: %s", r)
	}
}

// TestServiceUninstallSaysWhatItDid: uninstall is idempotent and honest:
// with nothing installed it says so and calls no service manager; with a
// unit installed it removes it and says that.
func TestServiceUninstallSaysWhatItDid(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fake := filepath.Join(e.dir, "fakebin")
	calls := filepath.Join(e.dir, "systemctl-calls")
	if err := os.MkdirAll(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\n"
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(e.dir, "xdg-config", "systemd", "user", "keep.service")
	service := func(sub string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := e.command(ctx, "service", sub)
		cmd.Env = append(cmd.Env, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
		return runCmd(t, cmd)
	}

	r := service("uninstall")
	if r.code != 0 || strings.Contains(r.stdout, "removed") || !strings.Contains(r.stdout, "not installed") {
		t.Errorf("uninstall with nothing installed: %s", r)
	}
	if _, err := os.Stat(calls); err == nil {
		t.Error("uninstall with nothing installed called systemctl")
	}
	if r := service("install"); r.code != 0 {
		t.Fatalf("install: %s", r)
	}
	r = service("uninstall")
	if r.code != 0 || !strings.Contains(r.stdout, "removed "+unit) {
		t.Errorf("uninstall: %s", r)
	}
	r = service("uninstall")
	if r.code != 0 || strings.Contains(r.stdout, "removed") {
		t.Errorf("a second uninstall: %s", r)
	}
}

// TestServiceInstallAgainWhileItRuns: keep service install while the
// service is installed and its daemon holds the database is not refused:
// the same unit says so and touches nothing; a keep at another path
// rewrites the unit and restarts the service. The fake systemctl reports
// the daemon this test started as the service's main process.
func TestServiceInstallAgainWhileItRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fake := filepath.Join(e.dir, "fakebin")
	calls := filepath.Join(e.dir, "systemctl-calls")
	mainPID := filepath.Join(e.dir, "main-pid")
	if err := os.MkdirAll(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mainPID, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\ncase \"$*\" in *show*)\n" +
		"  echo ActiveState=active; echo \"MainPID=$(cat '" + mainPID + "')\";;\nesac\n"
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(e.dir, "xdg-config", "systemd", "user", "keep.service")
	install := func(bin string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--db", e.db, "--config", e.config, "service", "install")
		cmd.Env = append(e.environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
		cmd.Dir = e.dir
		return runCmd(t, cmd)
	}
	systemctl := func() string {
		t.Helper()
		b, err := os.ReadFile(calls)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		os.Remove(calls)
		return string(b)
	}

	if r := install(keepBin); r.code != 0 || !strings.Contains(r.stdout, "installed "+unit) {
		t.Fatalf("first install: %s", r)
	}
	systemctl()
	// the service manager started it
	d := startDaemon(t, e)
	awaitSocket(t, e, d, time.Minute)
	if err := os.WriteFile(mainPID, []byte(strconv.Itoa(d.cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}

	r := install(keepBin)
	if r.code != 0 || !strings.Contains(r.stdout, "already installed and running") {
		t.Errorf("install again, the same: %s", r)
	}
	if got := systemctl(); strings.Contains(got, "enable") || strings.Contains(got, "restart") || strings.Contains(got, "daemon-reload") {
		t.Errorf("install again, the same, asked systemctl for %q", got)
	}

	moved := filepath.Join(e.dir, "newbin", "keep")
	data, err := os.ReadFile(keepBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moved, data, 0o755); err != nil {
		t.Fatal(err)
	}
	r = install(moved)
	if r.code != 0 || !strings.Contains(r.stdout, "rewrote "+unit) || !strings.Contains(r.stdout, "restarted") {
		t.Errorf("install again from another binary: %s", r)
	}
	if got := systemctl(); !strings.Contains(got, "--user daemon-reload") || !strings.Contains(got, "--user restart keep.service") {
		t.Errorf("install again from another binary asked systemctl for %q, want a reload and a restart", got)
	}
	if text, err := os.ReadFile(unit); err != nil || !strings.Contains(string(text), "ExecStart="+moved+" --daemon") {
		t.Errorf("the unit after install from %s: %v\n%s", moved, err, text)
	}
	d.stop(t)
}
