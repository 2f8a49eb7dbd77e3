// Package calendar is the CalDAV connector (github.com/emersion/go-webdav
// and go-ical): it reads the events of one calendar and creates, updates and
// deletes them, on any CalDAV server — Fastmail, iCloud, Nextcloud, Radicale,
// Google's CalDAV endpoint — with the configured account's password (Basic)
// or token (Bearer).
//
// A created event's UID is chosen by the host from the mutation's
// idempotency key, so a second attempt writes the same event (the PUT
// carries If-None-Match: *, and a 412 means it is already there), and
// reconciliation is a plain fetch of that UID.
package calendar

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"

	"keep/connectors"
)

// Defaults for Config's zero values.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxRange = 366 * 24 * time.Hour
	// DefaultMaxBody is more than one connector result (10 MiB, DESIGN
	// §8): an answer carries every event's whole iCalendar text in XML,
	// while a script gets a few fields of each.
	DefaultMaxBody = 32 << 20
	// defaultLength is a timed event's length when the script gives no end.
	defaultLength = time.Hour
)

// Config configures the connector.
type Config struct {
	// URL is the CalDAV base (https://caldav.fastmail.com/dav/) or a
	// calendar collection itself. Empty: the connector is offered but every
	// call fails naming the missing [connectors.calendar] url.
	URL string
	// Calendar picks one calendar by its path or display name. Default: the
	// URL itself if it is a calendar, else the first calendar holding events.
	Calendar string
	// Account signs the requests; nil sends none.
	Account connectors.Account
	// Client sends the requests. Default: a client with its own transport.
	Client *http.Client
	// Timeout bounds one call, on top of the caller's deadline. Default 30s.
	Timeout time.Duration
	// MaxRange caps to - from in events. Default 366 days.
	MaxRange time.Duration
	// MaxBody caps what is read of one answer, in bytes. Default
	// DefaultMaxBody.
	MaxBody int64
	// Now stamps DTSTAMP. Default time.Now.
	Now func() time.Time
	// Location is where a floating time (one without a zone) and an
	// all-day date are read: the person's own clock, as their calendar
	// app reads them. Default time.Local.
	Location *time.Location
}

// Connector is the calendar connector. It is safe for concurrent use.
type Connector struct {
	base     *url.URL
	want     string
	tr       *transport
	dav      *webdav.Client
	cal      *caldav.Client
	timeout  time.Duration
	maxRange time.Duration
	now      func() time.Time
	loc      *time.Location // Config.Location

	mu      sync.Mutex
	calPath string // found on first use
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a calendar connector for cfg.
func New(cfg Config) (*Connector, error) {
	c := &Connector{want: strings.TrimSpace(cfg.Calendar), timeout: cfg.Timeout, maxRange: cfg.MaxRange, now: cfg.Now}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxRange <= 0 {
		c.maxRange = DefaultMaxRange
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.loc = cfg.Location; c.loc == nil {
		c.loc = time.Local
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Transport: connectors.NewHTTPTransport()}
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	c.tr = &transport{client: client, account: cfg.Account, maxBody: cfg.MaxBody}
	if cfg.URL == "" {
		return c, nil
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("calendar: url %q must be an absolute http or https URL", cfg.URL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c.base = u
	if c.dav, err = webdav.NewClient(c.tr, u.String()); err != nil {
		return nil, fmt.Errorf("calendar: %w", err)
	}
	if c.cal, err = caldav.NewClient(c.tr, u.String()); err != nil {
		return nil, fmt.Errorf("calendar: %w", err)
	}
	return c, nil
}

// Name is "calendar".
func (c *Connector) Name() string { return "calendar" }

// InputTypes: a producer watching the calendar registers events.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"calendar": {"event"}}
}

const eventType = "{ uid: string, summary: string, start: string, end: string, allDay: boolean, location: string, description: string, recurrence?: string, recurrenceId?: string }"

var fieldArgs = []connectors.Arg{
	{Name: "summary", Type: "string", Doc: "the title"},
	{Name: "start", Type: "string", Doc: `an RFC 3339 time ("2026-11-23T10:00:00+01:00") or, for an all-day event, a date ("2026-11-23")`},
	{Name: "end", Type: "string", Doc: "like start, after it; default one hour (one day) after start"},
	{Name: "location", Type: "string"},
	{Name: "description", Type: "string"},
}

// Methods lists events, event, create, update and delete.
func (c *Connector) Methods() []connectors.Method {
	createArgs := append([]connectors.Arg{}, fieldArgs...)
	createArgs[0].Required, createArgs[1].Required = true, true
	updateArgs := append([]connectors.Arg{{Name: "uid", Type: "string", Required: true, Doc: "the event to change"}}, fieldArgs...)
	return []connectors.Method{
		{Name: "events", Kind: connectors.Read, Scope: c.scope,
			Doc: "Lists the events overlapping [from, to), sorted by start; a recurring event appears once per occurrence, with recurrenceId, as its overrides change it (one occurrence, or it and all following), and a cancelled occurrence not at all. Times are given in UTC, an all-day event's start and end as dates; a date (in from and to, or an all-day event's) and an event written without a zone (a floating time) are read on this machine's clock, as a calendar app shows them. More than " + strconv.Itoa(maxEvents) + " events, or an event repeating too often to walk through, fail the listing.",
			Args: []connectors.Arg{
				{Name: "from", Type: "string", Required: true, Doc: "an RFC 3339 time or a date"},
				{Name: "to", Type: "string", Required: true, Doc: "an RFC 3339 time or a date, after from, at most 366 days later"},
			},
			Result:  "Array<" + eventType + ">",
			Example: `const evs = await ctx.calendar.events({ from: "2026-11-23T00:00:00Z", to: "2026-11-24T00:00:00Z" })`},
		{Name: "event", Kind: connectors.ReadByID, Scope: c.scope,
			Doc:     "Reads one event by its UID (a recurring one as its first occurrence, with recurrence); null when the calendar has none.",
			Args:    []connectors.Arg{{Name: "uid", Type: "string", Required: true}},
			Result:  eventType + " | null",
			Example: `const ev = await ctx.calendar.event({ uid })`},
		{Name: "create", Kind: connectors.Mutate, Scope: c.scope, Preview: previewCreate, Check: c.checkCreate,
			Doc:       "Creates an event; its UID is derived from the mutation, so a retry writes the same event, never a second one.",
			Args:      createArgs,
			Result:    "{ uid: string }",
			Reconcile: "fetches the event by the UID derived from the mutation: present is applied, absent is not applied",
			Example:   `await ctx.calendar.create({ summary: "Review", start: "2026-11-24T15:00:00Z", end: "2026-11-24T15:30:00Z" })`},
		{Name: "update", Kind: connectors.Mutate, Scope: c.scope, Preview: previewUpdate, Check: c.checkUpdate,
			Doc:       "Changes the given fields of an event (of every occurrence, for a recurring one); a field set to \"\" is removed.",
			Args:      updateArgs,
			Refuses:   wholeEvent,
			Result:    eventType,
			Reconcile: "fetches the event and compares the fields the call set: all equal is applied, else not applied",
			Example:   `await ctx.calendar.update({ uid, location: "Room 2" })`},
		{Name: "delete", Kind: connectors.Mutate, Scope: c.scope, Preview: previewDelete, Check: c.checkDelete,
			Doc:       "Deletes an event, every occurrence of it.",
			Args:      []connectors.Arg{{Name: "uid", Type: "string", Required: true}},
			Refuses:   wholeEvent,
			Result:    "{ uid: string, deleted: true }",
			Reconcile: "fetches the event by UID: absent is applied, present is not applied",
			Example:   `await ctx.calendar.delete({ uid })`},
	}
}

// wholeEvent is why update and delete take no recurrenceId: they act on
// the whole event, and an occurrence's id passed to them would change or
// delete every occurrence.
var wholeEvent = map[string]string{
	"recurrenceId": "acts on every occurrence of the event and cannot take recurrenceId: one occurrence can't be changed or deleted alone",
}

// Do performs a method.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	if c.base == nil {
		return nil, connectors.Errorf(connectors.Logic, "the calendar is not configured: set [connectors.calendar] url (and account) in the config")
	}
	if err := ctx.Err(); err != nil {
		return nil, &connectors.Error{Class: connectors.Transient, Err: err}
	}
	if err := c.declared(call); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	switch call.Method {
	case "events":
		return c.events(ctx, call.Params)
	case "event":
		return c.event(ctx, call.Params)
	case "create":
		return c.create(ctx, call)
	case "update":
		return c.update(ctx, call)
	case "delete":
		return c.delete(ctx, call)
	}
	return nil, connectors.Errorf(connectors.Logic, "calendar has no method %q (it has: events, event, create, update, delete)", call.Method)
}

// declared refuses a parameter the method does not declare, as the host
// does before a call reaches any connector (connectors.Undeclared), for a
// call made here directly: recurrenceId (an occurrence, as events lists
// it) passed to update or delete would otherwise change or delete every
// occurrence, and recurrence passed to create would make a single event.
func (c *Connector) declared(call connectors.Call) error {
	for _, m := range c.Methods() {
		if m.Name == call.Method {
			return connectors.Undeclared(c.Name(), m, call.Params)
		}
	}
	return nil
}

// scope is what a grant narrows the mutations to: the configured calendar,
// or the server's URL. It does not depend on the params.
func (c *Connector) scope(map[string]any) string {
	if c.want != "" {
		return c.want
	}
	if c.base == nil {
		return ""
	}
	return c.base.Host + c.base.Path
}

// calendarPath finds the calendar collection once: the URL itself if it
// is one, else through the principal's calendar home set.
func (c *Connector) calendarPath(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calPath != "" {
		return c.calPath, nil
	}
	key := c.discoveryKey()
	if p, ok := discovered.Load(key); ok {
		c.calPath = p.(string)
		return c.calPath, nil
	}
	cals, err := c.cal.FindCalendars(ctx, c.base.Path)
	if err != nil && statusOf(err) != http.StatusNotFound && statusOf(err) != http.StatusForbidden {
		return "", classify(err, false)
	}
	if pick(cals, c.want) == nil {
		principal, err := c.dav.FindCurrentUserPrincipal(ctx)
		if err != nil {
			return "", classify(err, false)
		}
		home, err := c.cal.FindCalendarHomeSet(ctx, principal)
		if err != nil {
			return "", classify(err, false)
		}
		if cals, err = c.cal.FindCalendars(ctx, home); err != nil {
			return "", classify(err, false)
		}
	}
	chosen := pick(cals, c.want)
	if chosen == nil {
		var names []string
		for _, cal := range cals {
			names = append(names, cal.Path+" ("+cal.Name+")")
		}
		if c.want != "" {
			return "", connectors.Errorf(connectors.Logic, "no calendar %q at %s (found: %s)", c.want, connectors.RedactURL(c.base), strings.Join(names, ", "))
		}
		return "", connectors.Errorf(connectors.Logic, "no calendar holding events at %s (found: %s)", connectors.RedactURL(c.base), strings.Join(names, ", "))
	}
	c.calPath = chosen.Path
	if !strings.HasSuffix(c.calPath, "/") {
		c.calPath += "/"
	}
	discovered.Store(key, c.calPath)
	return c.calPath, nil
}

// discovered holds the calendar found for a URL, calendar and account, for
// the whole process: discovery is four PROPFINDs, and a process builds
// its connectors more than once (the engine's, a dry run's, keep auth
// test's).
var discovered sync.Map

// forget drops the calendar found, here and for the process.
func (c *Connector) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calPath = ""
	discovered.Delete(c.discoveryKey())
}

func (c *Connector) discoveryKey() string {
	who := ""
	if c.tr.account != nil {
		who = c.tr.account.Name() + "\x00" + c.tr.account.Username()
	}
	return c.base.String() + "\x00" + c.want + "\x00" + who
}

// pick chooses the calendar named want (by path or display name), or the
// first one that holds events.
func pick(cals []caldav.Calendar, want string) *caldav.Calendar {
	for i, cal := range cals {
		if want != "" {
			if strings.Trim(cal.Path, "/") == strings.Trim(want, "/") || cal.Name == want {
				return &cals[i]
			}
			continue
		}
		if len(cal.SupportedComponentSet) == 0 {
			return &cals[i]
		}
		for _, comp := range cal.SupportedComponentSet {
			if strings.EqualFold(comp, ical.CompEvent) {
				return &cals[i]
			}
		}
	}
	return nil
}

// uidFor derives the UID of the event a create writes from its idempotency
// key, so every attempt of one mutation names the same event.
func uidFor(key string) string {
	if key == "" {
		b := make([]byte, 16)
		rand.Read(b)
		return "keep-" + hex.EncodeToString(b)
	}
	sum := sha256.Sum256([]byte("keep calendar event\x00" + key))
	return "keep-" + hex.EncodeToString(sum[:16])
}

// objectPath is where the event with uid lives when keep created it.
func objectPath(calPath, uid string) string {
	return calPath + url.PathEscape(uid) + ".ics"
}

// send makes one request outside go-webdav's helpers, which can't carry
// If-Match or If-None-Match.
func (c *Connector) send(ctx context.Context, method, path string, header http.Header, body []byte) (*http.Response, error) {
	u := c.base.ResolveReference(&url.URL{Path: path})
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, connectors.Errorf(connectors.Internal, "calendar: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.tr.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

func encode(cal *ical.Calendar) ([]byte, error) {
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
		return nil, connectors.Errorf(connectors.Logic, "calendar: the event can't be written as iCalendar: %w", err)
	}
	return buf.Bytes(), nil
}
