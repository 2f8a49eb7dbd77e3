// Package sheets is the spreadsheet connector: a spreadsheet is a CSV file
// (one sheet) or a directory of CSV files (one file per sheet), found under
// the configured roots. Mutations rewrite the file atomically and tag the row
// they touch with a keyed tag of the mutation's idempotency key (keyed.go) in
// a hidden trailing column, so that reconciliation is a plain re-read of the
// file. A script's values
// go into a file as text, never as formulas (formula.go).
package sheets

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"keep/connectors"
)

// KeepIDColumn is the hidden column holding the tag of the idempotency key
// of the last mutation that wrote a row (rowTag). It is added to a sheet's header on first use and
// never returned to scripts.
const KeepIDColumn = "_keep_id"

// Defaults for Config's zero values.
const (
	DefaultRoot        = "~/Keep"
	DefaultMaxFileSize = 10 << 20 // 10 MiB
)

// Config configures the connector.
type Config struct {
	// Roots are the only trees the connector may touch. A leading "~" is the
	// user's home. Relative spreadsheet paths are taken from the first root.
	// Default: ["~/Keep"].
	Roots []string
	// MaxFileSize caps a sheet file, read or written, in bytes. Default 10 MiB.
	MaxFileSize int64
	// Protected are the host's own files (its database, log, config), never
	// read or written as a sheet whatever the roots. Nil: none.
	Protected *connectors.Protected

	// GoogleAccount signs requests for sheets named "google:ID/TAB"
	// ([connectors.sheets] google_account). Nil: such sheets fail with an
	// Auth error naming that key.
	GoogleAccount connectors.Account
	// GoogleEndpoint is the Sheets API's base URL. Default
	// https://sheets.googleapis.com/.
	GoogleEndpoint string
	// GoogleClient sends the requests. Default: a client with its own
	// transport and a 30s timeout.
	GoogleClient *http.Client
}

// Connector is the sheets connector. It is safe for concurrent use.
type Connector struct {
	roots     []string // absolute, cleaned
	maxSize   int64
	ops       fileOps
	protected *connectors.Protected
	google    googleAPI

	// mu serialises read-modify-write cycles so two mutations from this host
	// can't both read the old file and lose one row. Edits by other programs
	// are caught by the stamp check in writeAtomic instead.
	mu sync.Mutex

	// KeyTags keys the tags rows carry (rowTag).
	connectors.KeyTags
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a connector for cfg, filling in the defaults.
func New(cfg Config) (*Connector, error) {
	roots := cfg.Roots
	if len(roots) == 0 {
		roots = []string{DefaultRoot}
	}
	c := &Connector{maxSize: cfg.MaxFileSize, ops: osOps(), protected: cfg.Protected, google: newGoogleAPI(cfg)}
	if c.maxSize <= 0 {
		c.maxSize = DefaultMaxFileSize
	}
	for _, r := range roots {
		abs, err := expandRoot(r)
		if err != nil {
			return nil, fmt.Errorf("sheets: root %q: %w", r, err)
		}
		c.roots = append(c.roots, abs)
	}
	return c, nil
}

func expandRoot(r string) (string, error) {
	if strings.TrimSpace(r) == "" {
		return "", errors.New("empty path")
	}
	p, err := expandHome(r)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// expandHome replaces a leading "~" or "~/" with the user's home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand ~: %w", err)
	}
	return filepath.Join(home, p[1:]), nil
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return "sheets" }

// InputTypes implements connectors.InputSource.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"sheets": {"row"}}
}

// Methods implements connectors.Connector.
func (c *Connector) Methods() []connectors.Method {
	where := []connectors.Arg{
		{Name: "spreadsheet", Type: "string", Required: true,
			Doc: `a CSV file or a directory of them under the sheets roots ("invoices.csv"), or a Google sheet "google:SPREADSHEET_ID/TAB"`},
		{Name: "sheet", Type: "string", Doc: "the sheet of a directory spreadsheet, or the tab of \"google:SPREADSHEET_ID\""},
	}
	row := "{ rowNumber: number, row: Record<string, string> }"
	asText := " In a CSV file a value that begins with = + - @, a tab or a CR and is not a number is written after an apostrophe (') " +
		"so that a spreadsheet program shows it as text instead of running it as a formula, as a Google sheet takes it RAW; rows gives it back as written. " +
		"A number or a boolean goes to a Google sheet as a number or a boolean, not as text."
	reconcile := "re-reads the sheet and looks for the row carrying the mutation's key, signed with a secret of keep's, in the hidden _keep_id column; " +
		"a row holding the bare key, as an earlier keep wrote it, is put to you"
	return []connectors.Method{
		{Name: "rows", Kind: connectors.Read,
			Doc: "Reads a sheet: its header and every row as {column: text}, the hidden _keep_id column left out; " +
				"a CSV cell keep wrote as text (an apostrophe before = + - @ …) reads without that apostrophe.",
			Args:    where,
			Result:  "{ header: string[], rows: Array<Record<string, string>>, count: number }",
			Example: `const { rows } = await ctx.sheets.rows({ spreadsheet: "invoices.csv" })`},
		{Name: "appendRow", Kind: connectors.Mutate, Scope: c.scope, ScopeKind: connectors.ScopePath, Preview: previewAppend, Check: checkAppend,
			Doc: "Adds a row at the end, once however often the mutation is tried; a new or empty sheet gets header (or the row's columns) first." + asText,
			Args: append(slices.Clone(where),
				connectors.Arg{Name: "values", Type: "Array<string | number | boolean | null>", Doc: "the cells by position; or row"},
				connectors.Arg{Name: "row", Type: "Record<string, string | number | boolean | null>", Doc: "the cells by column; or values"},
				connectors.Arg{Name: "header", Type: "string[]", Doc: "the columns of a new sheet; must match an existing header"}),
			Result:    row,
			Reconcile: reconcile,
			Example:   `await ctx.sheets.appendRow({ spreadsheet: "google:1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/Invoices", row: { number: "INV-7", total: 120 } })`},
		{Name: "updateRow", Kind: connectors.Mutate, Scope: c.scope, ScopeKind: connectors.ScopePath, Preview: previewUpdate, Check: checkUpdate,
			Doc: "Changes the cells of the one row whose key column holds value." + asText,
			Args: append(slices.Clone(where),
				connectors.Arg{Name: "key", Type: "string", Required: true, Doc: "the column that names the row"},
				connectors.Arg{Name: "value", Type: "string | number | boolean", Required: true, Doc: "what that column holds in the row"},
				connectors.Arg{Name: "set", Type: "Record<string, string | number | boolean | null>", Required: true, Doc: "column: new value"}),
			Result:    row,
			Reconcile: reconcile,
			Example:   `await ctx.sheets.updateRow({ spreadsheet: "invoices.csv", key: "number", value: "INV-7", set: { paid: "yes" } })`},
	}
}

// Do implements connectors.Connector.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, &connectors.Error{Class: connectors.Transient, Err: err}
	}
	switch call.Method {
	case "rows":
		return c.rows(ctx, call.Params)
	case "appendRow":
		return c.appendRow(ctx, call)
	case "updateRow":
		return c.updateRow(ctx, call)
	}
	return nil, connectors.Errorf(connectors.Logic, "sheets has no method %q", call.Method)
}
