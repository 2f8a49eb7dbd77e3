package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"keep/connectors"
)

// A sheet named "google:SPREADSHEET_ID/TAB" (or "google:SPREADSHEET_ID" with
// sheet "TAB") is a tab of a Google spreadsheet, read and written through
// the Sheets API v4 with plain JSON over net/http: values.get for a read,
// values.update and values.append for a write, with the bearer token of
// [connectors.sheets] google_account. (google.golang.org/api/sheets/v4
// would bring gRPC, OpenTelemetry and protobuf along for three calls.)
//
// The tab behaves like a CSV file: the first row is the header, and the
// hidden _keep_id column (a real column at the end of the tab, left out of
// what scripts see) carries the key of the mutation that last wrote a row,
// so a repeated attempt and reconciliation find the row by re-reading.
// Values are written RAW: a cell that looks like a formula stays text.

const (
	googlePrefix = "google:"
	// DefaultGoogleEndpoint is the Sheets API's base URL.
	DefaultGoogleEndpoint = "https://sheets.googleapis.com/"

	googleTimeout = 30 * time.Second
)

// gsheet is one tab of a Google spreadsheet.
type gsheet struct{ id, tab string }

// googleAPI is the Sheets API client. A 429 or 503 goes to the host as
// transient with Google's Retry-After: the engine's retry tries again
// (from a fresh read, so a write Google refused but made anyway is found
// by its key), and no second retry loop runs under it.
type googleAPI struct {
	account  connectors.Account
	endpoint string
	client   *http.Client
	maxBody  int64
}

func newGoogleAPI(cfg Config) googleAPI {
	g := googleAPI{account: cfg.GoogleAccount, endpoint: cfg.GoogleEndpoint, client: cfg.GoogleClient,
		maxBody: cfg.MaxFileSize}
	if g.endpoint == "" {
		g.endpoint = DefaultGoogleEndpoint
	}
	if !strings.HasSuffix(g.endpoint, "/") {
		g.endpoint += "/"
	}
	if g.client == nil {
		g.client = &http.Client{Transport: connectors.NewHTTPTransport(), Timeout: googleTimeout}
	}
	if g.maxBody <= 0 {
		g.maxBody = DefaultMaxFileSize
	}
	return g
}

// locateGoogle reads "google:ID/TAB", or "google:ID" with sheet "TAB".
func (c *Connector) locateGoogle(spreadsheet, sheet string) (location, error) {
	id, tab, hasTab := strings.Cut(strings.TrimPrefix(spreadsheet, googlePrefix), "/")
	if id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return location{}, connectors.Errorf(connectors.Logic,
			"spreadsheet %q: a Google sheet is named google:SPREADSHEET_ID/TAB, the id as in its URL", spreadsheet)
	}
	switch {
	case hasTab && sheet != "":
		return location{}, connectors.Errorf(connectors.Logic, "spreadsheet %q already names the tab; leave out sheet %q", spreadsheet, sheet)
	case !hasTab:
		tab = sheet
	}
	if tab == "" {
		return location{}, connectors.Errorf(connectors.Logic, "spreadsheet %q: name the tab, as google:%s/TAB or with sheet", spreadsheet, id)
	}
	return location{label: googlePrefix + id + "/" + tab, google: &gsheet{id: id, tab: tab}}, nil
}

// a1 is a range in A1 notation on tab: 'My tab'!A5, or the whole tab.
func a1(tab, cells string) string {
	q := "'" + strings.ReplaceAll(tab, "'", "''") + "'"
	if cells == "" {
		return q
	}
	return q + "!" + cells
}

// valueRange is the Sheets API's ValueRange.
type valueRange struct {
	Range          string  `json:"range,omitempty"`
	MajorDimension string  `json:"majorDimension,omitempty"`
	Values         [][]any `json:"values,omitempty"`
}

// loadGoogle reads the tab with values.get.
func (c *Connector) loadGoogle(ctx context.Context, loc location) (*table, error) {
	var vr valueRange
	q := url.Values{"majorDimension": {"ROWS"}, "valueRenderOption": {"FORMATTED_VALUE"}}
	if err := c.google.call(ctx, http.MethodGet, loc, a1(loc.google.tab, ""), "", q, nil, &vr); err != nil {
		return nil, err
	}
	records := make([][]string, len(vr.Values))
	for i, row := range vr.Values {
		records[i] = make([]string, len(row))
		for j, v := range row {
			if s, ok := v.(string); ok {
				records[i][j] = s
			} else if v != nil {
				records[i][j] = fmt.Sprint(v)
			}
		}
	}
	t := &table{exists: true, keepCol: -1}
	if err := t.setRecords(records); err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s: %w", loc.label, err)
	}
	return t, nil
}

// saveGoogle writes what ch says changed: the header row, then the row,
// appended with values.append or replaced with values.update.
func (c *Connector) saveGoogle(ctx context.Context, loc location, t *table, ch *change) error {
	raw := url.Values{"valueInputOption": {"RAW"}}
	if ch.header {
		rng := a1(loc.google.tab, "A1")
		body := valueRange{Range: rng, MajorDimension: "ROWS", Values: [][]any{only(cells(t.header), headerCols(ch.headerFrom, len(t.header)))}}
		if err := c.google.call(ctx, http.MethodPut, loc, rng, "", raw, body, nil); err != nil {
			return err
		}
	}
	rec := cells(t.records[ch.row])
	for i, x := range ch.typed {
		rec[i] = x
	}
	if ch.appended {
		rng := a1(loc.google.tab, "A1")
		q := url.Values{"valueInputOption": {"RAW"}, "insertDataOption": {"INSERT_ROWS"}}
		body := valueRange{Range: rng, MajorDimension: "ROWS", Values: [][]any{rec}}
		var answer struct {
			Updates struct {
				UpdatedRange string `json:"updatedRange"`
			} `json:"updates"`
		}
		if err := c.google.call(ctx, http.MethodPost, loc, rng, ":append", q, body, &answer); err != nil {
			return err
		}
		// Google appends after the table the range starts, which an empty
		// row ends: the row may be above the last one read. It is put
		// where Google says, so rowNumber is where rows will find it.
		if at, ok := firstRow(answer.Updates.UpdatedRange); ok && at-2 >= 0 && at-2 < ch.row {
			r := t.records[ch.row]
			copy(t.records[at-1:ch.row+1], t.records[at-2:ch.row])
			t.records[at-2] = r
			ch.row = at - 2
		}
		return nil
	}
	rng := a1(loc.google.tab, fmt.Sprintf("A%d", ch.row+2)) // row 1 is the header
	body := valueRange{Range: rng, MajorDimension: "ROWS", Values: [][]any{only(rec, ch.cols)}}
	return c.google.call(ctx, http.MethodPut, loc, rng, "", raw, body, nil)
}

func cells(rec []string) []any {
	out := make([]any, len(rec))
	for i, s := range rec {
		out[i] = s
	}
	return out
}

// firstRow is the row number of the first cell of an A1 range such as
// 'My tab'!A6:E6.
func firstRow(rng string) (int, bool) {
	cell := rng[strings.LastIndex(rng, "!")+1:]
	cell, _, _ = strings.Cut(cell, ":")
	n, err := strconv.Atoi(strings.TrimLeft(cell, "ABCDEFGHIJKLMNOPQRSTUVWXYZ$"))
	return n, err == nil && n > 0
}

// only is rec with every cell but cols null, which the Sheets API skips,
// leaving what the cell holds; an empty string would clear it.
func only(rec []any, cols []int) []any {
	out := make([]any, len(rec))
	for _, i := range cols {
		out[i] = rec[i]
	}
	return out
}

// headerCols are the header cells from the first new one to n.
func headerCols(from, n int) []int {
	var cols []int
	for i := from; i < n; i++ {
		cols = append(cols, i)
	}
	return cols
}

// apiError is an answer of the Sheets API other than 2xx.
type apiError struct {
	Code    int    `json:"code"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Details []struct {
		Reason string `json:"reason"` // google.rpc.ErrorInfo's
	} `json:"details"`
}

// aboutToken says whether a 403 refuses the token itself (one granted
// without the spreadsheets scope), which signing in again mends; any other
// 403 refuses the account this spreadsheet (not shared with it), which it
// does not.
func (e *apiError) aboutToken() bool {
	for _, d := range e.Details {
		if d.Reason == "ACCESS_TOKEN_SCOPE_INSUFFICIENT" {
			return true
		}
	}
	return strings.Contains(e.Message, "insufficient authentication scopes")
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Google answered %d %s: %s", e.Code, e.Status, e.Message)
}

// maxMessage is how many characters of an error's message are quoted.
const maxMessage = 300

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// call makes one request of the Sheets API through connectors.Transport
// (a refused token is refreshed and the request sent once more).
func (g *googleAPI) call(ctx context.Context, method string, loc location, rng, suffix string, q url.Values, in, out any) error {
	write := method != http.MethodGet
	if g.account == nil {
		return connectors.Errorf(connectors.Auth, "%s is a Google sheet: set [connectors.sheets] google_account to an account that may use it", loc.label)
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return connectors.Errorf(connectors.Internal, "encode the request for %s: %w", loc.label, err)
		}
	}
	u := g.endpoint + "v4/spreadsheets/" + url.PathEscape(loc.google.id) + "/values/" + url.PathEscape(rng) + suffix + "?" + q.Encode()
	what := method + " " + loc.label
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return connectors.Errorf(connectors.Internal, "%s: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t := connectors.Transport{Client: g.client, Account: g.account}
	resp, sent, err := t.Do(req)
	if err != nil {
		x := connectors.Exchange{Err: err, Sent: sent, Mutation: write}
		if write && sent {
			return connectors.Failure(x, 0, fmt.Errorf("%s: no answer after sending: %w", what, err))
		}
		return connectors.Failure(x, 0, fmt.Errorf("%s: %w", what, err))
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, g.maxBody+1))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return classifyGoogle(what, loc, resp, data, write, g.account)
	}
	switch {
	case rerr != nil:
		x := connectors.Exchange{Status: resp.StatusCode, Err: rerr, Sent: true, Mutation: write}
		return connectors.Failure(x, 0, fmt.Errorf("%s: reading the answer: %w", what, rerr))
	case out == nil:
		// a write whose answer keep does not read: the 2xx says Google
		// did it, whatever came with it (a failure here would have a
		// fresh run write the row again, under another key)
	case write:
		// as above; what the answer says is read if it can be, and left
		// zero if not
		_ = json.Unmarshal(data, out)
	case int64(len(data)) > g.maxBody:
		return connectors.Errorf(connectors.Logic, "%s: the tab is larger than the %d bytes allowed", what, g.maxBody)
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return connectors.Errorf(connectors.Logic, "%s: the answer is not the Sheets API's: %w", what, err)
		}
	}
	return nil
}

// classifyGoogle turns a non-2xx answer into a classified error.
func classifyGoogle(what string, loc location, resp *http.Response, data []byte, write bool, account connectors.Account) error {
	var env struct {
		Error apiError `json:"error"`
	}
	ae := &env.Error
	if json.Unmarshal(data, &env) != nil || ae.Code == 0 {
		ae = &apiError{Code: resp.StatusCode, Status: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(data))}
	}
	ae.Code = resp.StatusCode
	// The error goes to the run, the ledger and the log: Google's message
	// is a line, and anything longer is a page of a proxy's or a server's
	// gone wrong, of which the start says what it is.
	ae.Message = clip(ae.Message, maxMessage)
	wrapped := fmt.Errorf("%s: %w", what, ae)
	code := resp.StatusCode
	// the class is the shared map's; the hints are Google's
	switch {
	case code == http.StatusNotFound:
		wrapped = fmt.Errorf("%w (is %s a spreadsheet the account can see?)", wrapped, loc.google.id)
	case code == http.StatusBadRequest && strings.Contains(ae.Message, "Unable to parse range"):
		wrapped = fmt.Errorf("%w (does the spreadsheet have a tab named %q?)", wrapped, loc.google.tab)
	}
	credential := true
	if code == http.StatusForbidden && !ae.aboutToken() {
		// as a 404 is: the person shares the spreadsheet, or names another
		credential = false
		who := account.Username()
		if who == "" {
			who = "account " + account.Name()
		}
		if write {
			who += ", as an editor" // a spreadsheet shared to view refuses a write alike
		}
		wrapped = fmt.Errorf("%w (is %s shared with %s?)", wrapped, loc.google.id, who)
	}
	x := connectors.Exchange{Status: code, Sent: true, Mutation: write, Credential: credential}
	return connectors.Failure(x, connectors.ParseRetryAfter(strings.TrimSpace(resp.Header.Get("Retry-After"))), wrapped)
}
