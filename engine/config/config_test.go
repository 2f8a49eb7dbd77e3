package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, body string, mode os.FileMode) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("a missing file at the default path means every default", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(filepath.Join(t.TempDir(), "none.toml"), false)
		if err != nil || cfg.Policy.TransientRetries != 5 || cfg.Policy.HandlerTimeout.Duration != 5*time.Minute {
			t.Fatalf("cfg = %+v, %v", cfg.Policy, err)
		}
	})

	t.Run("values override the defaults", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(write(t, "[policy]\nbackoff_base = \"1s\"\ndefault_mutation_mode = \"allow\"\n", 0o600), true)
		if err != nil || cfg.Policy.BackoffBase.Duration != time.Second || cfg.Policy.DefaultMutationMode != "allow" {
			t.Fatalf("cfg = %+v, %v", cfg.Policy, err)
		}
	})

	bad := map[string]struct{ body, want string }{
		"an unknown key":                  {"[policy]\nbackof_base = \"1s\"\n", "policy.backof_base"},
		"a bad duration":                  {"[policy]\nmin_wake = \"soon\"\n", `"soon" is not a duration`},
		"a bad mode":                      {"[policy]\ndefault_mutation_mode = \"maybe\"\n", "policy.default_mutation_mode"},
		"repair enabled with no repairer": {"[repair]\nenabled = true\n", "repair.enabled is true but there is no repairer"},
		"an interval below 1s":            {"[policy]\nmin_producer_interval = \"10ms\"\n", "policy.min_producer_interval"},
		"an incomplete subscription":      {"[[events.subscribes]]\ntopic = \"x\"\n", "events.subscribes[0]"},
		"a host naming no account":        {"[connectors.http.hosts.\"api.example.com\"]\naccount = \"nope\"\n", `account "nope" is not defined`},
		"a secret in an account":          {"[accounts.x]\nkind = \"token\"\ntoken = \"t\"\n", "accounts.x.token"},
	}
	for name, c := range bad {
		t.Run(name+" is an error that names it", func(t *testing.T) {
			t.Parallel()
			_, err := Load(write(t, c.body, 0o600), true)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to name %q", err, c.want)
			}
		})
	}

	t.Run("accounts and host credentials are read", func(t *testing.T) {
		t.Parallel()
		p := write(t, "[accounts.google]\nkind = \"oauth2\"\nprovider = \"google\"\nclient_id = \"id\"\nscopes = [\"gmail\"]\n"+
			"[connectors.http.hosts.\"api.example.com\"]\naccount = \"google\"\n", 0o644)
		cfg, err := Load(p, true)
		if err != nil || cfg.Accounts["google"].ClientID != "id" || cfg.Connectors.HTTP.Hosts["api.example.com"].Account != "google" {
			t.Fatalf("cfg = %+v, %v", cfg.Accounts, err)
		}
		if cfg.CredentialsPath() != filepath.Join(filepath.Dir(p), "credentials.json") {
			t.Errorf("credentials path = %s", cfg.CredentialsPath())
		}
	})

	t.Run("a secret in a file others can read is refused", func(t *testing.T) {
		t.Parallel()
		_, err := Load(write(t, "[connectors.mail]\npassword = \"hunter2\"\n", 0o644), true)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("err = %v", err)
		}
	})
}
