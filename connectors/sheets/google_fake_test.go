package sheets

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeSheets speaks the Sheets API v4's values.get, values.update and
// values.append as Google does (paths, query parameters, JSON shapes,
// error envelopes), over an in-memory grid per tab. Failures can be queued
// per HTTP method, and may be answered after the request was carried out.
type fakeSheets struct {
	t     *testing.T
	mu    sync.Mutex
	token string                // the one valid bearer token
	tabs  map[string][][]string // "ID/TAB" → rows
	fails []fakeFailure
	auths []string // Authorization headers, in order
	calls []string // "GET 'Tab'", "POST 'Tab'!A1:append", ...
	// shown is what values.get (FORMATTED_VALUE) answers for a cell whose
	// content is a key here: a formula's result, a number as formatted.
	// A cell not here reads as it is held.
	shown map[string]string
	// sent are the cells of the rows written, as JSON: "120" a number,
	// "\"120\"" the text 120
	sent [][]string
}

type fakeFailure struct {
	method     string
	status     int
	retryAfter string
	after      bool // carry the request out, then fail
	// padding, with after, answers 200 with this many bytes more than
	// Google's answer in it (a proxy's page, a server gone wrong)
	padding int
	// page, with after, answers 200 with this text instead of Google's
	// answer (a captive portal's or a proxy's page)
	page string
}

func newFakeSheets(t *testing.T) (*fakeSheets, string) {
	f := &fakeSheets{t: t, token: "token-1", tabs: map[string][][]string{}}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return f, ts.URL + "/"
}

func (f *fakeSheets) fail(ff ...fakeFailure) {
	f.mu.Lock()
	f.fails = append(f.fails, ff...)
	f.mu.Unlock()
}

func (f *fakeSheets) grid(key string) [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]string
	for _, r := range f.tabs[key] {
		out = append(out, append([]string(nil), r...))
	}
	return out
}

func googleError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// parseA1 reads 'Tab'!A5 or Tab!A5 or 'Tab': the tab and the row (0: none).
func parseA1(rng string) (tab string, row int, err error) {
	ref := ""
	if strings.HasPrefix(rng, "'") {
		end := strings.Index(rng[1:], "'!")
		if end < 0 {
			if !strings.HasSuffix(rng, "'") {
				return "", 0, fmt.Errorf("bad range %q", rng)
			}
			return strings.ReplaceAll(rng[1:len(rng)-1], "''", "'"), 0, nil
		}
		tab, ref = strings.ReplaceAll(rng[1:1+end], "''", "'"), rng[end+3:]
	} else {
		tab, ref, _ = strings.Cut(rng, "!")
	}
	if ref == "" {
		return tab, 0, nil
	}
	if !strings.HasPrefix(ref, "A") {
		return "", 0, fmt.Errorf("bad cell %q", ref)
	}
	row, err = strconv.Atoi(ref[1:])
	return tab, row, err
}

func (f *fakeSheets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		googleError(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	// /v4/spreadsheets/{id}/values/{range}[:append]
	parts := strings.SplitN(strings.TrimPrefix(r.URL.EscapedPath(), "/v4/spreadsheets/"), "/values/", 2)
	if len(parts) != 2 {
		googleError(w, 404, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	id, _ := url.PathUnescape(parts[0])
	rawRange, appendCall := strings.CutSuffix(parts[1], ":append")
	rng, err := url.PathUnescape(rawRange)
	if err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "bad range encoding")
		return
	}
	f.calls = append(f.calls, r.Method+" "+rng+map[bool]string{true: ":append"}[appendCall])
	var failure *fakeFailure
	if len(f.fails) > 0 && f.fails[0].method == r.Method {
		ff := f.fails[0]
		f.fails = f.fails[1:]
		failure = &ff
	}
	fail := func() {
		if failure.retryAfter != "" {
			w.Header().Set("Retry-After", failure.retryAfter)
		}
		status := map[int]string{429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL", 403: "PERMISSION_DENIED"}[failure.status]
		googleError(w, failure.status, status, "failing on purpose")
	}
	if failure != nil && !failure.after {
		fail()
		return
	}
	tab, row, err := parseA1(rng)
	key := id + "/" + tab
	grid, ok := f.tabs[key]
	if err != nil || !ok {
		googleError(w, 400, "INVALID_ARGUMENT", "Unable to parse range: "+rng)
		return
	}
	var vr valueRange
	if r.Method != http.MethodGet {
		if r.URL.Query().Get("valueInputOption") != "RAW" {
			googleError(w, 400, "INVALID_ARGUMENT", "Invalid valueInputOption: "+r.URL.Query().Get("valueInputOption"))
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&vr); err != nil || len(vr.Values) != 1 {
			googleError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
			return
		}
	}
	// rec is the row written over old: a null cell is skipped, as Google
	// skips it, leaving what the cell held.
	rec := func(old []string) []string {
		out := make([]string, max(len(vr.Values[0]), len(old)))
		copy(out, old)
		var sent []string
		for i, v := range vr.Values[0] {
			js, _ := json.Marshal(v)
			sent = append(sent, string(js))
			// held as FORMATTED_VALUE shows it, in the default format
			switch x := v.(type) {
			case nil:
				continue
			case string:
				out[i] = x
			case float64:
				out[i] = strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				out[i] = strings.ToUpper(strconv.FormatBool(x))
			default:
				f.t.Errorf("cell %d is %T, which the Sheets API does not take", i, v)
			}
		}
		f.sent = append(f.sent, sent)
		return out
	}
	var answer any
	switch {
	case r.Method == http.MethodGet:
		values := make([][]any, 0, len(grid))
		for _, row := range grid {
			for len(row) > 0 && row[len(row)-1] == "" { // Google trims trailing empty cells
				row = row[:len(row)-1]
			}
			row = append([]string(nil), row...)
			for i, c := range row {
				if s, ok := f.shown[c]; ok {
					row[i] = s
				}
			}
			values = append(values, cells(row))
		}
		for len(values) > 0 && len(values[len(values)-1]) == 0 {
			values = values[:len(values)-1]
		}
		vr := map[string]any{"range": fmt.Sprintf("%s!A1:Z%d", a1(tab, ""), max(len(values), 1)), "majorDimension": "ROWS"}
		if len(values) > 0 {
			vr["values"] = values
		}
		answer = vr
	case r.Method == http.MethodPost && appendCall:
		if r.URL.Query().Get("insertDataOption") != "INSERT_ROWS" {
			f.t.Errorf("append with insertDataOption %q", r.URL.Query().Get("insertDataOption"))
		}
		// Google appends after the table the range's first cell is in:
		// the rows from there down to the first empty one. Below an empty
		// row it inserts a row, pushing the rest down (INSERT_ROWS).
		n := 0
		for n < len(grid) && strings.Join(grid[n], "") != "" {
			n++
		}
		grid = append(grid[:n:n], append([][]string{rec(nil)}, grid[n:]...)...)
		f.tabs[key] = grid
		n++
		updated := fmt.Sprintf("%s!A%d:%c%d", a1(tab, ""), n, 'A'+len(vr.Values[0])-1, n)
		answer = map[string]any{"spreadsheetId": id, "tableRange": fmt.Sprintf("%s!A1:Z%d", a1(tab, ""), n-1),
			"updates": map[string]any{"spreadsheetId": id, "updatedRange": updated, "updatedRows": 1,
				"updatedColumns": len(vr.Values[0]), "updatedCells": len(vr.Values[0])}}
	case r.Method == http.MethodPut && row > 0:
		for len(grid) < row {
			grid = append(grid, nil)
		}
		grid[row-1] = rec(grid[row-1])
		f.tabs[key] = grid
		answer = map[string]any{"spreadsheetId": id, "updatedRange": rng, "updatedRows": 1,
			"updatedColumns": len(vr.Values[0]), "updatedCells": len(vr.Values[0])}
	default:
		googleError(w, 400, "INVALID_ARGUMENT", "unsupported request "+r.Method+" "+rng)
		return
	}
	if failure != nil && failure.page != "" {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, failure.page)
		return
	}
	if failure != nil && failure.padding > 0 {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		json.NewEncoder(w).Encode(map[string]any{"answer": answer, "padding": strings.Repeat("x", failure.padding)})
		return
	}
	if failure != nil {
		fail()
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(answer)
}

// googleAccount is an oauth2 account whose token the fake may have revoked:
// Invalidate moves on to the next token.
type googleAccount struct {
	mu      sync.Mutex
	tokens  []string
	invalid int
}

func (a *googleAccount) Name() string     { return "google" }
func (a *googleAccount) Kind() string     { return "oauth2" }
func (a *googleAccount) Username() string { return "me@example.com" }
func (a *googleAccount) Secret(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tokens[min(a.invalid, len(a.tokens)-1)], nil
}
func (a *googleAccount) Invalidate() {
	a.mu.Lock()
	a.invalid++
	a.mu.Unlock()
}
