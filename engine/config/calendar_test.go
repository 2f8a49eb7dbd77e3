package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCalendarAndGoogleSheetKeys(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "config.toml")
	body := `[connectors.calendar]
url = "https://caldav.fastmail.com/dav/"
calendar = "Work"
account = "fastmail"

[connectors.sheets]
google_account = "google"
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Calendar{URL: "https://caldav.fastmail.com/dav/", Calendar: "Work", Account: "fastmail"}
	if cfg.Connectors.Calendar != want || cfg.Connectors.Sheets.GoogleAccount != "google" {
		t.Fatalf("calendar %+v, sheets %+v", cfg.Connectors.Calendar, cfg.Connectors.Sheets)
	}
	if len(cfg.Connectors.Sheets.Roots) != 1 {
		t.Fatalf("google_account dropped the default roots: %v", cfg.Connectors.Sheets.Roots)
	}
}
