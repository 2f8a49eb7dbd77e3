package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestRetention(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, body string) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("the defaults keep 30 days, never compact and rotate the log at 10 MB", func(t *testing.T) {
		t.Parallel()
		r := Default().Retention
		if r.Traces.Duration != 720*time.Hour || r.Runs.Duration != 720*time.Hour || r.CompactPayloadsAfter.Duration != 0 || r.LogMaxMB != 10 {
			t.Fatalf("defaults = %+v", r)
		}
	})

	t.Run("the defaults written out read back the same, compact_payloads_after as an empty string", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		if err := toml.NewEncoder(&b).Encode(Default()); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "[retention]") || !strings.Contains(b.String(), `compact_payloads_after = ""`) {
			t.Fatalf("encoded defaults lack [retention]:\n%s", b.String())
		}
		cfg, err := Load(write(t, b.String()), true)
		if err != nil || cfg.Retention != Default().Retention {
			t.Fatalf("read back %+v (%v), want %+v", cfg.Retention, err, Default().Retention)
		}
	})

	t.Run("values override the defaults", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(write(t, "[retention]\ntraces = \"48h\"\ncompact_payloads_after = \"2160h\"\nlog_max_mb = 3\n"), true)
		r := cfg.Retention
		if err != nil || r.Traces.Duration != 48*time.Hour || r.Runs.Duration != 720*time.Hour ||
			r.CompactPayloadsAfter.Duration != 2160*time.Hour || r.LogMaxMB != 3 {
			t.Fatalf("retention = %+v, %v", r, err)
		}
	})

	for body, want := range map[string]string{
		"[retention]\ntraces = \"1m\"\n":      "retention.traces",
		"[retention]\nruns = \"\"\n":          "retention.runs",
		"[retention]\nlog_max_mb = 0\n":       "retention.log_max_mb",
		"[retention]\nkeep_forever = true\n":  "retention.keep_forever",
		"[retention]\ntraces = \"a month\"\n": `"a month" is not a duration`,
	} {
		t.Run("a bad value is an error naming "+want, func(t *testing.T) {
			t.Parallel()
			_, err := Load(write(t, body), true)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want it to name %q", err, want)
			}
		})
	}
}
