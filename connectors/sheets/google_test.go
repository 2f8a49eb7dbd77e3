package sheets

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

const sheetID = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"

// googleBundle is a connector whose Google sheets go to a fake Sheets API,
// with its files under a temp dir.
type googleBundle struct {
	*bundle
	fake    *fakeSheets
	account *googleAccount
}

func setupGoogle(t *testing.T) *googleBundle {
	t.Helper()
	fake, endpoint := newFakeSheets(t)
	g := &googleBundle{fake: fake, account: &googleAccount{tokens: []string{"token-1"}}}
	root := t.TempDir()
	c, err := New(Config{Roots: []string{root}, GoogleAccount: g.account, GoogleEndpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	c.UseSecret(testSecret)
	g.bundle = &bundle{c: c, root: root}
	fake.tabs[sheetID+"/Invoices"] = nil
	return g
}

// requests is how many requests reached the fake.
func (g *googleBundle) requests() int {
	g.fake.mu.Lock()
	defer g.fake.mu.Unlock()
	return len(g.fake.auths)
}

var invoices = map[string]any{"spreadsheet": "google:" + sheetID + "/Invoices"}

func TestGoogleSheetIsLikeACSVFile(t *testing.T) {
	t.Parallel()
	g := setupGoogle(t)
	csvSheet := sheet("invoices.csv")
	steps := []struct {
		method, key string
		params      map[string]any
	}{
		{"appendRow", "k1", map[string]any{"header": []any{"number", "customer", "total"}, "values": []any{"INV-1", "ACME", 12.5}}},
		{"appendRow", "k2", map[string]any{"row": map[string]any{"number": "INV-2", "customer": "Globex, Inc.", "total": "=SUM(A1:A9)"}}},
		{"appendRow", "k2", map[string]any{"row": map[string]any{"number": "INV-2", "customer": "Globex, Inc.", "total": "=SUM(A1:A9)"}}},
		{"updateRow", "k3", map[string]any{"key": "number", "value": "INV-1", "set": map[string]any{"total": 13}}},
		{"updateRow", "k3", map[string]any{"key": "number", "value": "INV-1", "set": map[string]any{"total": 13}}},
		{"appendRow", "", map[string]any{"values": []any{"INV-3", "", ""}}},
		{"rows", "", map[string]any{}},
	}
	for i, s := range steps {
		fromCSV, errCSV := g.do(t, s.method, s.key, with(csvSheet, flatten(s.params)...))
		fromGoogle, errGoogle := g.do(t, s.method, s.key, with(invoices, flatten(s.params)...))
		if errCSV != nil || errGoogle != nil {
			t.Fatalf("step %d %s: csv %v, google %v", i, s.method, errCSV, errGoogle)
		}
		if !reflect.DeepEqual(fromCSV, fromGoogle) {
			t.Fatalf("step %d %s:\n csv    %v\n google %v", i, s.method, fromCSV, fromGoogle)
		}
	}
	// the tab holds the values the file holds, hidden column included;
	// the file has a formula-like one as text, as the tab has it RAW
	records, err := csv.NewReader(strings.NewReader(g.read(t, "invoices.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := records[2][2]; got != "'=SUM(A1:A9)" {
		t.Errorf("the file holds a formula-like value as %q", got)
	}
	for _, r := range records {
		for i, c := range r {
			r[i] = unescapeFormula(c)
		}
	}
	grid := g.fake.grid(sheetID + "/Invoices")
	if fmt.Sprint(trimRows(records)) != fmt.Sprint(trimRows(grid)) {
		t.Fatalf("tab\n%q\nfile\n%q", grid, records)
	}
	calls := strings.Join(g.fake.calls, "\n")
	for _, want := range []string{"POST 'Invoices'!A1:append", "PUT 'Invoices'!A1", "PUT 'Invoices'!A2"} {
		if !strings.Contains(calls, want) {
			t.Errorf("no %q among the calls:\n%s", want, calls)
		}
	}
	if got := grid[2][2]; got != "=SUM(A1:A9)" {
		t.Errorf("a formula-like value was written as %q", got)
	}
}

func flatten(m map[string]any) []any {
	var kv []any
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return kv
}

// trimRows drops trailing empty cells, as Google does.
func trimRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		for len(r) > 0 && r[len(r)-1] == "" {
			r = r[:len(r)-1]
		}
		out[i] = r
	}
	return out
}

func TestGoogleSheets(t *testing.T) {
	t.Parallel()
	row := map[string]any{"row": map[string]any{"number": "INV-1", "total": "10"}}

	t.Run("the tab may be named in spreadsheet or with sheet", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.tabs[sheetID+"/March 2026"] = [][]string{{"a", "b"}, {"1", "2"}}
		for _, p := range []map[string]any{
			{"spreadsheet": "google:" + sheetID + "/March 2026"},
			{"spreadsheet": "google:" + sheetID, "sheet": "March 2026"},
		} {
			got := g.mustDo(t, "rows", "", p)
			if got["count"] != int64(1) || fmt.Sprint(got["rows"]) != "[map[a:1 b:2]]" {
				t.Fatalf("%v: %v", p, got)
			}
		}
		if want := "GET 'March 2026'"; g.fake.calls[0] != want {
			t.Errorf("first call %q, want %q", g.fake.calls[0], want)
		}
	})

	t.Run("reconciling finds the row by its key, or its absence", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.mustDo(t, "appendRow", "k1", with(invoices, flatten(row)...))
		v, res, err := g.c.Reconcile(context.Background(), connectors.Call{Method: "appendRow", Params: with(invoices, flatten(row)...), IdempotencyKey: "k1"})
		if err != nil || v != connectors.Applied || res.(map[string]any)["rowNumber"] != int64(1) {
			t.Fatalf("applied append: %s %v %v", v, res, err)
		}
		v, _, err = g.c.Reconcile(context.Background(), connectors.Call{Method: "appendRow", Params: with(invoices, flatten(row)...), IdempotencyKey: "k9"})
		if err != nil || v != connectors.NotApplied {
			t.Fatalf("an append never sent: %s %v", v, err)
		}
		upd := with(invoices, "key", "number", "value", "INV-1", "set", map[string]any{"total": "11"})
		g.mustDo(t, "updateRow", "k2", upd)
		if v, _, err := g.c.Reconcile(context.Background(), connectors.Call{Method: "updateRow", Params: upd, IdempotencyKey: "k2"}); err != nil || v != connectors.Applied {
			t.Fatalf("applied update: %s %v", v, err)
		}
	})

	t.Run("a 429 goes to the host as transient with Google's Retry-After, not tried again beneath it", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.fail(fakeFailure{method: "GET", status: 429, retryAfter: "3"})
		_, err := g.do(t, "appendRow", "k1", with(invoices, flatten(row)...))
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Transient || ce.RetryAfter != 3*time.Second {
			t.Fatalf("err = %v", err)
		}
		if n := g.requests(); n != 1 {
			t.Fatalf("%d requests, want 1: the engine's retry is the only one", n)
		}
		// the engine's retry
		if got := g.mustDo(t, "appendRow", "k1", with(invoices, flatten(row)...)); got["rowNumber"] != int64(1) {
			t.Fatalf("append after the 429: %v", got)
		}
	})

	t.Run("a 503 to an append Google carried out: the host's retry finds the row by its key", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.fail(fakeFailure{method: "POST", status: 503, after: true})
		_, err := g.do(t, "appendRow", "k1", with(invoices, flatten(row)...))
		wantClass(t, err, connectors.Transient, "503")
		got := g.mustDo(t, "appendRow", "k1", with(invoices, flatten(row)...))
		if got["rowNumber"] != int64(1) || len(g.fake.grid(sheetID+"/Invoices")) != 2 {
			t.Fatalf("result %v, tab %q", got, g.fake.grid(sheetID+"/Invoices"))
		}
	})

	t.Run("a 200 to an append with an answer over the size cap is applied, not failed", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		c, err := New(Config{Roots: []string{g.root}, GoogleAccount: g.account, GoogleEndpoint: g.c.google.endpoint, MaxFileSize: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		g.c = c
		g.fake.fail(fakeFailure{method: "POST", after: true, padding: 4 << 10})
		// Google said 200: the row is there, and a failure would have the
		// row written again by a fresh run under another key
		got, err := g.do(t, "appendRow", "k1", with(invoices, flatten(row)...))
		if err != nil || len(g.fake.grid(sheetID+"/Invoices")) != 2 {
			t.Fatalf("result %v, err %v, tab %q", got, err, g.fake.grid(sheetID+"/Invoices"))
		}
	})

	t.Run("a 503 is left to the host as transient with Retry-After", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.fail(fakeFailure{method: "GET", status: 503, retryAfter: "30"})
		_, err := g.do(t, "rows", "", invoices)
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Transient || ce.RetryAfter != 30*time.Second {
			t.Fatalf("err = %v", err)
		}
		if n := g.requests(); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})

	t.Run("a 401 invalidates the token and the call goes on with a fresh one", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.account.tokens = []string{"expired", "token-1"}
		g.mustDo(t, "appendRow", "k1", with(invoices, flatten(row)...))
		if g.account.invalid != 1 || g.fake.auths[0] != "Bearer expired" || g.fake.auths[1] != "Bearer token-1" {
			t.Fatalf("invalidations %d, authorizations %q", g.account.invalid, g.fake.auths)
		}
	})

	t.Run("a token refused twice is an auth failure", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.account.tokens = []string{"revoked"}
		_, err := g.do(t, "rows", "", invoices)
		wantClass(t, err, connectors.Auth, "401")
	})

	t.Run("a 500 to a write is uncertain, to a read transient", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.fail(fakeFailure{method: "PUT", status: 500})
		_, err := g.do(t, "appendRow", "k1", with(invoices, "header", []any{"number"}, "values", []any{"INV-1"}))
		wantClass(t, err, connectors.Uncertain, "500")
		g.fake.fail(fakeFailure{method: "GET", status: 500})
		_, err = g.do(t, "rows", "", invoices)
		wantClass(t, err, connectors.Transient, "500")
	})

	t.Run("a read answered 200 with what is not the Sheets API's is a logic failure", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		// the server's (a proxy's page, a server gone wrong), not a bug of
		// keep's: the person can look at it, and nothing was done
		g.fake.fail(fakeFailure{method: "GET", after: true, page: "<html>Sign in to the hotel wifi</html>"})
		_, err := g.do(t, "rows", "", invoices)
		wantClass(t, err, connectors.Logic, "the answer is not the Sheets API's")
	})

	t.Run("bad names and missing config are clear errors", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		_, err := g.do(t, "rows", "", sheet("google:"+sheetID+"/Nope"))
		wantClass(t, err, connectors.Logic, `tab named "Nope"`)
		_, err = g.do(t, "rows", "", sheet("google:"+sheetID))
		wantClass(t, err, connectors.Logic, "name the tab")
		_, err = g.do(t, "rows", "", sheet("google:bad id/Tab"))
		wantClass(t, err, connectors.Logic, "google:SPREADSHEET_ID/TAB")
		_, err = g.do(t, "rows", "", with(invoices, "sheet", "Other"))
		wantClass(t, err, connectors.Logic, "already names the tab")

		c, err := New(Config{Roots: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), connectors.Call{Method: "rows", Params: invoices})
		wantClass(t, err, connectors.Auth, "[connectors.sheets] google_account")
	})

	t.Run("updateRow changes the cells it sets and leaves the row's formulas and numbers alone", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		// values.get gives a formula's result and a number as formatted:
		// written back RAW, they would be text in place of the formula
		// and the number
		g.fake.tabs[sheetID+"/Invoices"] = [][]string{
			{"number", "price", "qty", "total"},
			{"INV-1", "1234.5", "2", "=B2*C2"},
		}
		g.fake.shown = map[string]string{"1234.5": "$1,234.50", "=B2*C2": "$2,469.00"}
		got := g.mustDo(t, "updateRow", "k1", with(invoices, "key", "number", "value", "INV-1", "set", map[string]any{"qty": 3}))
		if fmt.Sprint(got["row"]) != "map[number:INV-1 price:$1,234.50 qty:3 total:$2,469.00]" {
			t.Fatalf("result %v", got)
		}
		want := [][]string{
			{"number", "price", "qty", "total", KeepIDColumn},
			{"INV-1", "1234.5", "3", "=B2*C2", tag("k1")},
		}
		if grid := g.fake.grid(sheetID + "/Invoices"); fmt.Sprint(grid) != fmt.Sprint(want) {
			t.Fatalf("tab\n%q\nwant\n%q", grid, want)
		}
	})

	t.Run("a number or a boolean goes to the tab as one, not as text", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		// RAW stores a JSON string as text: a total of "120" is text that
		// SUM leaves out, a "true" no checkbox's value
		g.mustDo(t, "appendRow", "k1", with(invoices, "header", []any{"number", "total", "paid", "note"},
			"values", []any{"INV-1", 120.5, false, "7"}))
		g.mustDo(t, "appendRow", "k2", with(invoices, "row", map[string]any{"number": "INV-2", "total": int64(99), "note": nil}))
		g.mustDo(t, "updateRow", "k3", with(invoices, "key", "number", "value", "INV-1", "set", map[string]any{"paid": true}))
		sent := fmt.Sprint(g.fake.sent)
		want := `[["number" "total" "paid" "note" "_keep_id"] ["INV-1" 120.5 false "7" "` + tag("k1") + `"] ` +
			`["INV-2" 99 "" "" "` + tag("k2") + `"] [null null true null "` + tag("k3") + `"]]`
		if sent != want {
			t.Fatalf("cells sent\n%s\nwant\n%s", sent, want)
		}
	})

	t.Run("the hidden column does not go over cells to the right of the header", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		// a note beside the table, in a column with no header: a file is
		// written whole, its ragged cells moved past the new column, but a
		// tab gets only the cells written, and the key would go over it
		g.fake.tabs[sheetID+"/Invoices"] = [][]string{
			{"number", "total"},
			{"INV-1", "10", "call them back"},
		}
		before := fmt.Sprint(g.fake.grid(sheetID + "/Invoices"))
		_, err := g.do(t, "updateRow", "k1", with(invoices, "key", "number", "value", "INV-1", "set", map[string]any{"total": "11"}))
		wantClass(t, err, connectors.Logic, "C2", "header")
		_, err = g.do(t, "appendRow", "k2", with(invoices, "values", []any{"INV-2", "5"}))
		wantClass(t, err, connectors.Logic, "C2", "header")
		if after := fmt.Sprint(g.fake.grid(sheetID + "/Invoices")); after != before {
			t.Fatalf("tab %s, was %s", after, before)
		}
	})

	t.Run("an appended row's number is where Google put it", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		// an empty row ends the table Google appends to: the new row goes
		// in there, not under the last row read
		g.fake.tabs[sheetID+"/Invoices"] = [][]string{
			{"number", "total", KeepIDColumn},
			{"INV-1", "10", "k0"},
			{},
			{"INV-9", "90", "k9"},
		}
		got := g.mustDo(t, "appendRow", "k1", with(invoices, "values", []any{"INV-2", "20"}))
		rows := g.mustDo(t, "rows", "", invoices)["rows"].([]any)
		n, _ := got["rowNumber"].(int64)
		if n < 1 || int(n) > len(rows) || fmt.Sprint(rows[n-1]) != fmt.Sprint(got["row"]) {
			t.Fatalf("appendRow said row %v, %v; rows are %v", got["rowNumber"], got["row"], rows)
		}
		// and the host's retry of the same mutation says the same
		again := g.mustDo(t, "appendRow", "k1", with(invoices, "values", []any{"INV-2", "20"}))
		if again["rowNumber"] != got["rowNumber"] {
			t.Fatalf("the retry says row %v, the append said %v", again["rowNumber"], got["rowNumber"])
		}
	})

	t.Run("a grant narrows a Google sheet to its spreadsheet", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		if got := g.c.scope(invoices); got != "google:"+sheetID {
			t.Fatalf("scope %q", got)
		}
	})
}

func TestGoogleErrorQuotesOnlyTheStartOfAnAnswer(t *testing.T) {
	t.Parallel()
	// a proxy in front of Google answering with a page of its own, or a
	// server gone wrong: the error lands in the run, the ledger and the
	// log, so it quotes what names the failure, not the whole page
	page := "<html><title>502 Bad Gateway</title>" + strings.Repeat("<p>upstream went away</p>", 40000) + "</html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{Roots: []string{t.TempDir()}, GoogleAccount: &googleAccount{tokens: []string{"token-1"}}, GoogleEndpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Do(context.Background(), connectors.Call{Method: "rows", Params: invoices})
	wantClass(t, err, connectors.Transient, "502", "Bad Gateway")
	if n := len(err.Error()); n > 1000 {
		t.Fatalf("the error is %d bytes long: %.300s…", n, err.Error())
	}
}

func TestGoogle403(t *testing.T) {
	t.Parallel()
	// Google's answers, as they come: a spreadsheet not shared with the
	// account, and a token without the spreadsheets scope
	notShared := `{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}`
	noScope := `{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ACCESS_TOKEN_SCOPE_INSUFFICIENT",` +
		`"domain":"googleapis.com","metadata":{"service":"sheets.googleapis.com","method":"google.apps.sheets.v4.SpreadsheetsService.GetValues"}}]}}`
	for _, tc := range []struct {
		name, body string
		want       connectors.Class
		says       string
	}{
		// signing in again gives the same account the same refusal: the
		// person must share the spreadsheet, as for a 404
		{"a spreadsheet not shared with the account is a logic error", notShared, connectors.Logic, "shared with me@example.com"},
		{"a token without the scope is an auth failure", noScope, connectors.Auth, "insufficient authentication scopes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			c, err := New(Config{Roots: []string{t.TempDir()}, GoogleAccount: &googleAccount{tokens: []string{"token-1"}}, GoogleEndpoint: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), connectors.Call{Method: "rows", Params: invoices})
			wantClass(t, err, tc.want, "403", tc.says)
		})
	}
}

func TestColumnName(t *testing.T) {
	t.Parallel()
	for i, want := range map[int]string{0: "A", 2: "C", 25: "Z", 26: "AA", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := columnName(i); got != want {
			t.Errorf("columnName(%d) = %q, want %q", i, got, want)
		}
	}
}
