package service

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestCheckBinary(t *testing.T) {
	t.Parallel()
	cache := "/home/ann/.cache/go-build"
	for _, bin := range []string{cache + "/3f/3f9a-d/keep", "/tmp/go-build2718281/b001/exe/keep"} {
		if err := CheckBinary(bin, cache); err == nil || !strings.Contains(err.Error(), "go install") {
			t.Errorf("%s: %v, want a refusal that says go install", bin, err)
		}
	}
	for _, bin := range []string{"/home/ann/go/bin/keep", "/usr/local/bin/keep", "/home/ann/.cache/go-builder/keep"} {
		if err := CheckBinary(bin, cache); err != nil {
			t.Errorf("%s refused: %v", bin, err)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	v, r, m := Version(nil)
	if v != "(devel)" || r != "unknown" || m {
		t.Errorf("no build info: %q %q %v", v, r, m)
	}
	v, r, m = Version(&debug.BuildInfo{Main: debug.Module{Version: ""}})
	if v != "(devel)" || r != "unknown" || m {
		t.Errorf("no version, no VCS: %q %q %v", v, r, m)
	}
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	v, r, m = Version(bi)
	if v != "v1.2.3" || r != "0123456789abcdef" || !m {
		t.Errorf("from build info: %q %q %v", v, r, m)
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()

	t.Run("a needed variable that is not set is missing; optional ones are carried only when set", func(t *testing.T) {
		t.Parallel()
		e := Env{Needed: []string{"MAIL_PW"}, Optional: []string{"LLM_KEY", "SLACK"}}
		env := map[string]string{"LLM_KEY": "k"}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		carry, missing := e.Carry(lookup)
		if len(missing) != 1 || missing[0] != "MAIL_PW" || len(carry) != 1 || carry["LLM_KEY"] != "k" {
			t.Fatalf("carry %v missing %v", carry, missing)
		}
		env["MAIL_PW"] = `pa"ss\word`
		carry, missing = e.Carry(lookup)
		if len(missing) != 0 || carry["MAIL_PW"] != env["MAIL_PW"] {
			t.Fatalf("carry %v missing %v", carry, missing)
		}
	})

	t.Run("install writes the variables where only the owner reads them, and the unit points at them", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		o := Opts{GOOS: "linux", Binary: "/usr/local/bin/keep", DB: "/data/keep.db", Config: filepath.Join(home, "cfg", "config.toml"),
			Home: home, ConfigHome: filepath.Join(home, ".config"), Env: map[string]string{"MAIL_PW": `pa"ss\word`},
			Run: func(context.Context, string, ...string) ([]byte, error) { return nil, nil }}
		path, _, err := Install(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		unit, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(unit), "EnvironmentFile="+EnvFile(o)+"\n") || strings.Contains(string(unit), "ss\\word") {
			t.Errorf("unit:\n%s", unit)
		}
		fi, err := os.Stat(EnvFile(o))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("env file: %v %v", fi, err)
		}
		got, _ := os.ReadFile(EnvFile(o))
		if string(got) != `MAIL_PW="pa\"ss\\word"`+"\n" {
			t.Errorf("env file = %q", got)
		}

		if _, _, err := Uninstall(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(EnvFile(o)); !os.IsNotExist(err) {
			t.Errorf("uninstall left the variables behind: %v", err)
		}

		o.GOOS = "darwin"
		text, err := File(o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "<key>EnvironmentVariables</key>") || !strings.Contains(text, "<key>MAIL_PW</key>") {
			t.Errorf("plist without the environment:\n%s", text)
		}
	})
}
