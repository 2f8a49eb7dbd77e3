package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/config"
)

type namedAccount struct{ name string }

func (a namedAccount) Name() string                           { return a.name }
func (a namedAccount) Kind() string                           { return "password" }
func (a namedAccount) Username() string                       { return "me" }
func (a namedAccount) Secret(context.Context) (string, error) { return "pw", nil }
func (a namedAccount) Invalidate()                            {}

func TestConnectorsCalendarAndFeed(t *testing.T) {
	t.Parallel()

	t.Run("feed and calendar are connectors whose input sources come from them", func(t *testing.T) {
		t.Parallel()
		reg, err := Connectors(config.Default(), ConnectorOpts{})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"feed", "calendar"} {
			if _, ok := reg.Get(name); !ok {
				t.Errorf("no %s connector", name)
			}
		}
		if err := reg.CheckInput("feed", "item"); err != nil {
			t.Error(err)
		}
		if err := reg.CheckInput("calendar", "event"); err != nil {
			t.Error(err)
		}
		if _, _, err := reg.Lookup("calendar", "create"); err != nil {
			t.Error(err)
		}
	})

	t.Run("sheets google_account is resolved by name", func(t *testing.T) {
		t.Parallel()
		cfg := config.Default()
		cfg.Connectors.Sheets.GoogleAccount = "google"
		if _, err := Connectors(cfg, ConnectorOpts{}); err == nil || !strings.Contains(err.Error(), "connectors.sheets.google_account") {
			t.Fatalf("without accounts: err = %v", err)
		}
		var asked string
		resolve := func(name string) (connectors.Account, error) { asked = name; return namedAccount{name}, nil }
		if _, err := Connectors(cfg, ConnectorOpts{Account: resolve}); err != nil || asked != "google" {
			t.Fatalf("err %v, asked %q", err, asked)
		}
	})

	t.Run("a calendar account is resolved by name, and an unknown one is an error naming the key", func(t *testing.T) {
		t.Parallel()
		cfg := config.Default()
		cfg.Connectors.Calendar = config.Calendar{URL: "https://caldav.example.com/dav/", Account: "fastmail"}
		var asked []string
		resolve := func(name string) (connectors.Account, error) {
			asked = append(asked, name)
			if name != "fastmail" {
				return nil, errors.New("no such account")
			}
			return namedAccount{name}, nil
		}
		if _, err := Connectors(cfg, ConnectorOpts{Account: resolve}); err != nil || len(asked) == 0 || asked[0] != "fastmail" {
			t.Fatalf("err %v, asked %v", err, asked)
		}
		cfg.Connectors.Calendar.Account = "icloud"
		if _, err := Connectors(cfg, ConnectorOpts{Account: resolve}); err == nil || !strings.Contains(err.Error(), "connectors.calendar.account") {
			t.Fatalf("err = %v", err)
		}
		if _, err := Connectors(cfg, ConnectorOpts{}); err == nil || !strings.Contains(err.Error(), `"icloud"`) {
			t.Fatalf("without accounts: err = %v", err)
		}
	})
}
