package service

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// paths with a space and a percent sign: the quoting is what can go wrong
var golden = Opts{Binary: "/opt/keep/bin/keep", DB: "/home/ann/My Data/keep.db", Config: "/home/ann/.config/keep/100%.toml",
	Home: "/home/ann"}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n%s", name, got)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()

	t.Run("the systemd user unit runs keep --daemon with absolute paths and restarts on failure", func(t *testing.T) {
		t.Parallel()
		o := golden
		o.GOOS = "linux"
		text, err := File(o)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "keep.service", text)
		if p, _ := Path(o); p != "/home/ann/.config/systemd/user/keep.service" {
			t.Fatalf("unit path %s", p)
		}
	})

	t.Run("the launchd agent runs keep --daemon at login and again after a failure", func(t *testing.T) {
		t.Parallel()
		o := golden
		o.GOOS = "darwin"
		text, err := File(o)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "keep.daemon.plist", text)
		if p, _ := Path(o); p != "/home/ann/Library/LaunchAgents/keep.daemon.plist" {
			t.Fatalf("plist path %s", p)
		}
	})

	t.Run("the unit names the environment file as systemd reads it, unquoted, whatever its folder", func(t *testing.T) {
		t.Parallel()
		// EnvironmentFile= takes the rest of the line as the path, quotes
		// and all (unlike ExecStart=): only specifiers are escaped
		o := golden
		o.GOOS, o.Config = "linux", "/home/ann/My Config 100%/config.toml"
		o.Env = map[string]string{"KEEP_MAIL_PASSWORD": "pw"}
		text, err := File(o)
		if err != nil {
			t.Fatal(err)
		}
		if want := "\nEnvironmentFile=/home/ann/My Config 100%%/service.env\n"; !strings.Contains(text, want) {
			t.Fatalf("the unit does not say %q:\n%s", want, text)
		}
	})

	t.Run("relative paths and unknown systems are refused", func(t *testing.T) {
		t.Parallel()
		o := golden
		o.GOOS, o.DB = "linux", "keep.db"
		if _, err := File(o); err == nil || !strings.Contains(err.Error(), "not absolute") {
			t.Fatalf("relative db: %v", err)
		}
		o = golden
		o.GOOS = "plan9"
		if _, err := File(o); err == nil || !strings.Contains(err.Error(), "plan9") {
			t.Fatalf("plan9: %v", err)
		}
	})

	t.Run("systemd-analyze verify accepts the unit", func(t *testing.T) {
		t.Parallel()
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			t.Skip("systemd-analyze is not installed: the unit's golden file is still checked")
		}
		bin, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "with space 100%")
		// with an environment, so the EnvironmentFile= line is verified too
		// (systemd takes its path as it stands: quotes would be part of it)
		o := Opts{GOOS: "linux", Binary: bin, DB: filepath.Join(dir, "keep.db"), Config: filepath.Join(dir, "config.toml"), Home: dir,
			Env: map[string]string{"KEEP_MAIL_PASSWORD": "pw"}}
		text, err := File(o)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "keep.service")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
}

// fakeSystemctl puts a systemctl on PATH that records its arguments, one
// call a line, and answers `show` like systemd does.
func fakeSystemctl(t *testing.T, show string) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\ncase \"$*\" in *show*) printf '%s\\n' '" +
		strings.ReplaceAll(show, "\n", "' '") + "';; esac\n"
	if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

func TestInstall(t *testing.T) {
	ctx := context.Background()
	log := fakeSystemctl(t, "ActiveState=active\nActiveEnterTimestamp=Mon 2026-11-23 13:00:05 UTC")
	home := t.TempDir()
	o := Opts{GOOS: "linux", Binary: "/usr/local/bin/keep", DB: "/data/keep.db", Config: "/cfg/config.toml", Home: home,
		ConfigHome: filepath.Join(home, ".config")}

	st, err := Status(ctx, o)
	if err != nil || st.Installed || st.Running || st.State != "not installed" {
		t.Fatalf("status before install: %+v, %v", st, err)
	}
	path, did, err := Install(ctx, o)
	if err != nil || did != Started {
		t.Fatalf("install: %v, %v", did, err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "ExecStart=/usr/local/bin/keep --daemon --db /data/keep.db --config /cfg/config.toml") {
		t.Fatalf("unit at %s: %v\n%s", path, err, b)
	}
	want := []string{"--user_daemon-reload", "--user_enable_--now_keep.service"}
	if got := calls(t, log); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("install ran systemctl %v, want %v", got, want)
	}

	st, err = Status(ctx, o)
	if err != nil || !st.Installed || !st.Running || !st.Since.Equal(time.Date(2026, 11, 23, 13, 0, 5, 0, time.UTC)) {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if got := calls(t, log); got[len(got)-1] != "--user_show_-p_ActiveState,ActiveEnterTimestamp,MainPID_keep.service" {
		t.Fatalf("status ran %v", got[len(got)-1])
	}

	if _, removed, err := Uninstall(ctx, o); err != nil || !removed {
		t.Fatalf("uninstall: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the unit is still there after uninstall: %v", err)
	}
	got := calls(t, log)
	if strings.Join(got[len(got)-2:], " ") != "--user_disable_--now_keep.service --user_daemon-reload" {
		t.Fatalf("uninstall ran %v", got)
	}
	if _, removed, err := Uninstall(ctx, o); err != nil || removed {
		t.Fatalf("a second uninstall: removed %v, %v", removed, err)
	}
}

func TestStatusParsing(t *testing.T) {
	t.Parallel()
	st, err := systemdState(State{}, "ActiveState=failed\nActiveEnterTimestamp=\n")
	if err != nil || st.Running || st.State != "failed" || !st.Since.IsZero() {
		t.Fatalf("failed unit: %+v, %v", st, err)
	}
	if _, err := systemdState(State{}, "Nothing=here\n"); err == nil {
		t.Fatal("output without ActiveState was taken")
	}
	ls := launchdState(State{}, "keep.daemon = {\n\tactive count = 1\n\tstate = running\n\tpid = 4242\n}\n")
	if !ls.Running || ls.PID != 4242 {
		t.Fatalf("launchd: %+v", ls)
	}
}

// keep service install asked again: the same unit with the service
// running touches nothing; another binary (or config, or environment)
// rewrites the unit and restarts the service, as enable --now alone would
// leave the old process on the old file.
func TestInstallAgain(t *testing.T) {
	ctx := context.Background()
	log := fakeSystemctl(t, "ActiveState=active\nActiveEnterTimestamp=Mon 2026-11-23 13:00:05 UTC\nMainPID=4242")
	home := t.TempDir()
	o := Opts{GOOS: "linux", Binary: "/usr/local/bin/keep", DB: "/data/keep.db", Config: filepath.Join(home, "cfg", "config.toml"), Home: home,
		ConfigHome: filepath.Join(home, ".config"), Env: map[string]string{"MAIL_PW": "one"}}
	path, did, err := Install(ctx, o)
	if err != nil || did != Started {
		t.Fatalf("first install: %v, %v", did, err)
	}
	if st, err := Status(ctx, o); err != nil || st.PID != 4242 {
		t.Fatalf("status names no main pid: %+v, %v", st, err)
	}
	before := len(calls(t, log))

	if _, did, err := Install(ctx, o); err != nil || did != Unchanged {
		t.Fatalf("the same install again: %v, %v", did, err)
	}
	if got := calls(t, log)[before:]; strings.Join(got, " ") != "--user_show_-p_ActiveState,ActiveEnterTimestamp,MainPID_keep.service" {
		t.Fatalf("the same install again ran systemctl %v, want only show", got)
	}

	for _, change := range []struct {
		what string
		to   func(*Opts)
		in   func() string
	}{
		{"a new binary", func(o *Opts) { o.Binary = "/opt/keep/bin/keep" }, func() string { b, _ := os.ReadFile(path); return string(b) }},
		{"a new secret", func(o *Opts) { o.Env = map[string]string{"MAIL_PW": "two"} }, func() string { b, _ := os.ReadFile(EnvFile(o)); return string(b) }},
	} {
		change.to(&o)
		before := len(calls(t, log))
		if _, did, err := Install(ctx, o); err != nil || did != Rewritten {
			t.Fatalf("install with %s: %v, %v", change.what, did, err)
		}
		want := "--user_show_-p_ActiveState,ActiveEnterTimestamp,MainPID_keep.service --user_daemon-reload --user_enable_keep.service --user_restart_keep.service"
		if got := calls(t, log)[before:]; strings.Join(got, " ") != want {
			t.Fatalf("install with %s ran systemctl %v, want %s", change.what, got, want)
		}
		if text, want := change.in(), map[string]string{"a new binary": "/opt/keep/bin/keep --daemon", "a new secret": `MAIL_PW="two"`}[change.what]; !strings.Contains(text, want) {
			t.Fatalf("after install with %s the file says:\n%s", change.what, text)
		}
	}
}
