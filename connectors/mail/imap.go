package mail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"keep/connectors"
)

const (
	defaultLimit = 50
	maxLimit     = 500
	// snippetBytes is how much of each message search fetches to build a
	// snippet: enough to get past the headers and a multipart preamble to
	// the first text part, without pulling attachments.
	snippetBytes = 32 << 10
	// maxSearchBytes is the most one search reads from the server for its
	// messages' envelopes and snippets: a full page of ordinary mail
	// (maxLimit × snippetBytes is 16 MiB) fits, and a page of messages
	// with huge headers (an envelope is as large as the headers it
	// quotes, and imapclient reads each whole) is cut short instead of
	// read into memory without bound.
	maxSearchBytes = 24 << 20
	// maxReplies is what a call reads beside a message and a search's
	// summaries (see budgetConn): mailbox lists, search results, flags.
	maxReplies = 8 << 20
)

// imapSession is one logged-in IMAP connection for one call.
type imapSession struct {
	c    *Connector
	cl   *imapclient.Client
	stop func() bool
	// budget bounds what one command reads (see budgetConn)
	budget *budgetConn
}

// dialIMAP connects and logs in. imapclient has no context support, so the
// connection is closed when ctx ends: every pending command then fails and
// the call returns.
func (c *Connector) dialIMAP(ctx context.Context) (*imapSession, error) {
	cr, conn, err := c.connectIMAP(ctx)
	if err != nil {
		return nil, err
	}
	addr := c.cfg.IMAP
	budget := &budgetConn{Conn: conn, callMax: c.maxMessage + c.maxSearch + maxReplies}
	conn = budget
	opts := &imapclient.Options{TLSConfig: c.tlsConfig(addr)}
	var cl *imapclient.Client
	if c.cfg.tlsModeFor(addr) == TLSStartTLS {
		cl, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			conn.Close()
			return nil, c.fail(ctx, classifyIMAP(err), "imap: starttls with "+addr, err)
		}
	} else {
		cl = imapclient.New(conn, opts)
	}
	s := &imapSession{c: c, cl: cl, stop: context.AfterFunc(ctx, func() { cl.Close() }), budget: budget}
	if err := cl.WaitGreeting(); err != nil {
		s.close()
		return nil, c.fail(ctx, classifyIMAP(err), "imap: greeting from "+addr, err)
	}
	if err := s.login(ctx, cr); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// connectIMAP asks for the credentials and connects to the IMAP server:
// what go-imap v2 (dialIMAP) and v1 (dialGmail) sessions share.
func (c *Connector) connectIMAP(ctx context.Context) (creds, net.Conn, error) {
	cr, err := c.credentials(ctx)
	if err != nil {
		return creds{}, nil, err
	}
	conn, err := c.dial(ctx, c.cfg.IMAP, "imap")
	if err != nil {
		return creds{}, nil, c.fail(ctx, classifyIMAP(err), "imap: connect to "+c.cfg.IMAP, err)
	}
	return cr, conn, nil
}

// login logs in with cr. A password uses LOGIN, or AUTHENTICATE where the
// server disables LOGIN or auth is set; a token uses XOAUTH2 or
// OAUTHBEARER. A refused token is invalidated and tried once more with a
// fresh one (it may have expired a moment ago); a second refusal is the
// user's to fix.
func (s *imapSession) login(ctx context.Context, cr creds) error {
	c := s.c
	for attempt := 0; ; attempt++ {
		err := s.authenticate(cr)
		if err == nil {
			return nil
		}
		class := loginError(err)
		if class != connectors.Auth || !cr.bearer || attempt > 0 {
			return c.refusal(cr, err, c.fail(ctx, class, "imap: login as "+cr.user, err))
		}
		c.invalidate()
		if cr, err = c.credentials(ctx); err != nil {
			return err
		}
	}
}

func (s *imapSession) authenticate(cr creds) error {
	cfg := s.c.cfg
	if !cr.bearer && cfg.Auth == "" && !s.cl.Caps().Has(imap.CapLoginDisabled) {
		return s.cl.Login(cr.user, cr.secret).Wait()
	}
	var offered []string
	for cp := range s.cl.Caps() {
		if m, ok := strings.CutPrefix(string(cp), "AUTH="); ok {
			offered = append(offered, m)
		}
	}
	sort.Strings(offered)
	mech, err := s.c.mechanism(cr, offered)
	if err != nil {
		return err
	}
	return s.cl.Authenticate(saslClient(mech, cr, cfg.IMAP))
}

// close logs out politely and releases the connection; a read has its
// answer by now, so a failing LOGOUT changes nothing. The context watch
// stays on until the end, so a server that never answers LOGOUT cannot
// hold the call past its deadline.
func (s *imapSession) close() {
	_ = s.cl.Logout().Wait()
	s.stop()
	_ = s.cl.Close()
}

// examine opens mailbox read-only (reads must not clear \Recent or \Seen)
// and returns its UIDVALIDITY.
func (s *imapSession) examine(ctx context.Context, mailbox string) (uint32, error) {
	data, err := s.cl.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return 0, s.c.fail(ctx, classifyIMAP(err), fmt.Sprintf("imap: open mailbox %q", mailbox), err)
	}
	return data.UIDValidity, nil
}

// search implements the search method: {mailbox, after, from, subject,
// limit} → {messages, cursor, uidValidity}. The cursor is a UID, so it is
// only meaningful with the mailbox's UIDVALIDITY, returned beside it; ids
// carry both.
func (c *Connector) search(ctx context.Context, params map[string]any) (any, error) {
	mailbox, err := stringParam(params, "mailbox")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "search: %v", err)
	}
	if mailbox == "" {
		mailbox = c.cfg.Inbox
	}
	after, _, err := uintParam(params, "after")
	if err != nil || after > maxUID {
		return nil, connectors.Errorf(connectors.Logic, "search: after must be a UID (a non-negative integer): %v", params["after"])
	}
	from, err := stringParam(params, "from")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "search: %v", err)
	}
	subject, err := stringParam(params, "subject")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "search: %v", err)
	}
	unseen, err := boolParam(params, "unseen")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "search: %v", err)
	}
	since, err := dateParam(params, "since")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "search: %v", err)
	}
	limit, set, err := uintParam(params, "limit")
	switch {
	case err != nil || set && (limit < 1 || limit > maxLimit):
		return nil, connectors.Errorf(connectors.Logic, "search: limit must be between 1 and %d: %v", maxLimit, params["limit"])
	case !set:
		limit = defaultLimit
	}

	s, err := c.dialIMAP(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	validity, err := s.examine(ctx, mailbox)
	if err != nil {
		return nil, err
	}

	// UID after+1:* ; a server answers "N:*" with the last message even
	// when every UID is below N (RFC 3501 §6.4.8), so the result is
	// filtered again below.
	var uids imap.UIDSet
	uids.AddRange(imap.UID(after+1), 0)
	criteria := &imap.SearchCriteria{UID: []imap.UIDSet{uids}}
	if from != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "From", Value: from})
	}
	if subject != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "Subject", Value: subject})
	}
	if unseen {
		criteria.NotFlag = append(criteria.NotFlag, imap.FlagSeen)
	}
	if !since.IsZero() {
		criteria.Since = since
	}
	data, err := s.cl.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return nil, c.fail(ctx, classifyIMAP(err), "imap: search "+mailbox, err)
	}
	var found []imap.UID
	for _, u := range data.AllUIDs() {
		if uint64(u) > after {
			found = append(found, u)
		}
	}
	// Oldest first, and the cursor is the last one returned: a limited page
	// never skips the messages that did not fit.
	sort.Slice(found, func(i, j int) bool { return found[i] < found[j] })
	if uint64(len(found)) > limit {
		found = found[:limit]
	}

	messages := []any{}
	cursor := int64(after)
	truncated := false
	if len(found) > 0 {
		msgs, complete, err := s.fetchSummaries(ctx, mailbox, found)
		if err != nil {
			return nil, err
		}
		// Cut short by the byte budget: the cursor stops after the last
		// message returned, so the next search starts with the first that
		// did not fit, and none is skipped.
		if complete < len(found) {
			found, truncated = found[:complete], true
		}
		copies := map[imap.UID]string{}
		for _, m := range msgs {
			// The copies sends route back to the account are keep's
			// bookkeeping, not mail to act on (a workflow answering its
			// inbox would answer itself).
			if mailbox == c.cfg.Inbox && c.isSelfCopy(m) {
				copies[imap.UID(m["uid"].(int64))] = m["messageId"].(string)
				continue
			}
			m["id"] = makeID(mailbox, validity, imap.UID(m["uid"].(int64)))
			messages = append(messages, m)
		}
		cursor = int64(found[len(found)-1])
		if len(copies) > 0 {
			// Tidying never fails a read; the next search tries again.
			_ = s.fileSelfCopies(ctx, copies)
		}
	}
	result := map[string]any{
		"messages":    messages,
		"cursor":      cursor,
		"uidValidity": int64(validity),
	}
	if truncated {
		result["truncated"] = true
	}
	return result, nil
}

// maxUID is the largest UID IMAP allows (a non-zero 32-bit number).
const maxUID = 1<<32 - 1

// fetchSummaries fetches envelope and the first bytes of each message in
// uids (ascending), in uid order, reading at most maxSearch bytes. complete
// is how many of uids, from the first, the summaries cover: all of them,
// or those read in full before the budget was spent. The session's
// connection is closed when it was.
func (s *imapSession) fetchSummaries(ctx context.Context, mailbox string, uids []imap.UID) (out []map[string]any, complete int, err error) {
	section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: snippetBytes}}
	s.budget.arm(s.c.maxSearch)
	bufs, err := s.fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{
		UID:         true,
		Envelope:    true,
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{section},
	}, s.c.maxMessage)
	complete = len(uids)
	if s.budget.disarm() {
		// the message being read when the budget ran out came back cut
		// short, if at all: it and any after it are for the next search
		if len(bufs) > 0 {
			bufs = bufs[:len(bufs)-1]
		}
		got := map[imap.UID]bool{}
		for _, b := range bufs {
			got[b.UID] = true
		}
		complete = 0
		for complete < len(uids) && got[uids[complete]] {
			complete++
		}
		if complete == 0 {
			return nil, 0, connectors.Errorf(connectors.Logic,
				"search: message %d of %q alone has more than the %d bytes of headers and snippet one search reads: search after it (after: %d) to go past it",
				uids[0], mailbox, s.c.maxSearch, uids[0])
		}
		err = nil
	}
	if err != nil {
		return nil, 0, s.c.fail(ctx, fetchClass(err), "imap: fetch from "+mailbox, err)
	}
	sort.Slice(bufs, func(i, j int) bool { return bufs[i].UID < bufs[j].UID })
	keep := map[imap.UID]bool{}
	for _, u := range uids[:complete] {
		keep[u] = true
	}
	out = make([]map[string]any, 0, len(bufs))
	for _, b := range bufs {
		if !keep[b.UID] {
			continue
		}
		var raw []byte
		if len(b.BodySection) > 0 {
			raw = b.BodySection[0].Bytes
		}
		p := parseMessage(raw)
		m := map[string]any{
			"uid":       int64(b.UID),
			"messageId": p.messageID,
			"from":      p.from,
			"to":        p.to,
			"subject":   p.subject,
			"date":      formatDate(p.date),
			"snippet":   snippet(p.text),
			"seen":      hasFlag(b.Flags, imap.FlagSeen),
			"flagged":   hasFlag(b.Flags, imap.FlagFlagged),
		}
		// The envelope is the server's own parse of the full header; prefer
		// it over ours of a possibly truncated copy.
		if env := b.Envelope; env != nil {
			if env.MessageID != "" {
				m["messageId"] = bracketID(env.MessageID)
			}
			if len(env.From) > 0 {
				m["from"] = envAddr(env.From[0])
			}
			if len(env.To) > 0 {
				to := []any{}
				for _, a := range env.To {
					to = append(to, envAddr(a))
				}
				m["to"] = to
			}
			cc := []any{}
			for _, a := range env.Cc {
				cc = append(cc, envAddr(a))
			}
			m["cc"] = cc
			m["subject"] = env.Subject
			if !env.Date.IsZero() {
				m["date"] = formatDate(env.Date)
			}
		}
		out = append(out, m)
	}
	return out, complete, nil
}

func envAddr(a imap.Address) string {
	return formatAddr(a.Name, a.Addr())
}

func formatDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// makeID is a message's stable id: the mailbox, its UIDVALIDITY and the
// UID. A UID alone is only meaningful with its UIDVALIDITY; a mailbox that
// was rebuilt invalidates the old ids instead of pointing them elsewhere.
func makeID(mailbox string, validity uint32, uid imap.UID) string {
	return fmt.Sprintf("%s:%d:%d", mailbox, validity, uid)
}

// parseID splits an id from the right, so mailbox names may hold colons.
func parseID(id string) (mailbox string, validity uint32, uid imap.UID, err error) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 {
		return "", 0, 0, fmt.Errorf("%q is not a mail id (mailbox:uidvalidity:uid)", id)
	}
	j := strings.LastIndexByte(id[:i], ':')
	if j <= 0 {
		return "", 0, 0, fmt.Errorf("%q is not a mail id (mailbox:uidvalidity:uid)", id)
	}
	v, err1 := strconv.ParseUint(id[j+1:i], 10, 32)
	u, err2 := strconv.ParseUint(id[i+1:], 10, 32)
	if err1 != nil || err2 != nil || u == 0 {
		return "", 0, 0, fmt.Errorf("%q is not a mail id (mailbox:uidvalidity:uid)", id)
	}
	return id[:j], uint32(v), imap.UID(u), nil
}

// get implements the get method: one whole message by id.
func (c *Connector) get(ctx context.Context, params map[string]any) (any, error) {
	id, err := stringParam(params, "id")
	if err != nil || id == "" {
		return nil, connectors.Errorf(connectors.Logic, "get: id is required (a string from search)")
	}
	mailbox, validity, uid, err := parseID(id)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "get: %v", err)
	}
	withContent, err := boolParam(params, "attachments")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "get: %v", err)
	}
	maxBytes, set, err := uintParam(params, "maxBytes")
	switch {
	case err != nil || set && (maxBytes < 1 || maxBytes > maxAttachment):
		return nil, connectors.Errorf(connectors.Logic, "get: maxBytes must be between 1 and %d: %v", maxAttachment, params["maxBytes"])
	case !set:
		maxBytes = maxAttachment
	}
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	current, err := s.examine(ctx, mailbox)
	if err != nil {
		return nil, err
	}
	if current != validity {
		return nil, connectors.Errorf(connectors.Logic, "get: no message %q: mailbox %q was rebuilt (uidvalidity %d, not %d)", id, mailbox, current, validity)
	}
	section := &imap.FetchItemBodySection{Peek: true}
	bufs, err := s.fetch(imap.UIDSetNum(uid), &imap.FetchOptions{
		UID:         true,
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{section},
	}, c.maxMessage)
	if err != nil {
		return nil, c.fail(ctx, fetchClass(err), "imap: fetch "+id, err)
	}
	var raw []byte
	var flags []imap.Flag
	for _, b := range bufs {
		if b.UID == uid && len(b.BodySection) > 0 {
			raw, flags = b.BodySection[0].Bytes, b.Flags
		}
	}
	if raw == nil {
		return nil, connectors.Errorf(connectors.Logic, "get: no message %q in %q", id, mailbox)
	}
	p := parseMessage(raw)
	p.attachments = attachmentsOf(raw)
	inReplyTo := any(nil)
	if p.inReplyTo != "" {
		inReplyTo = p.inReplyTo
	}
	return map[string]any{
		"id":          id,
		"uid":         int64(uid),
		"messageId":   p.messageID,
		"from":        p.from,
		"to":          p.to,
		"cc":          p.cc,
		"subject":     p.subject,
		"date":        formatDate(p.date),
		"text":        p.text,
		"inReplyTo":   inReplyTo,
		"references":  p.references,
		"seen":        hasFlag(flags, imap.FlagSeen),
		"flagged":     hasFlag(flags, imap.FlagFlagged),
		"attachments": p.attachmentList(withContent, int(maxBytes)),
	}, nil
}

// fetch is Fetch(...).Collect() for the items keep asks for (UID, flags,
// envelope, internal date, size, body sections), reading no body section over max bytes.
// On a failure it returns what it read before it, the last message perhaps
// cut short, with the error: a search cut by its byte budget keeps the
// messages read whole.
// imapclient's Collect reads a literal whole into memory, however large
// the server says it is; the size comes before the bytes, so a larger one
// is refused unread and the connection, left in the middle of an answer,
// is closed.
func (s *imapSession) fetch(set imap.NumSet, opts *imap.FetchOptions, max int64) ([]*imapclient.FetchMessageBuffer, error) {
	cmd := s.cl.Fetch(set, opts)
	var out []*imapclient.FetchMessageBuffer
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		buf := &imapclient.FetchMessageBuffer{SeqNum: msg.SeqNum}
		for item := msg.Next(); item != nil; item = msg.Next() {
			switch item := item.(type) {
			case imapclient.FetchItemDataBodySection:
				var b []byte
				if item.Literal != nil {
					if size := item.Literal.Size(); size > max {
						s.abandon(item.Literal)
						return nil, &tooLargeError{size: size, max: max}
					}
					var err error
					if b, err = io.ReadAll(item.Literal); err != nil {
						cmd.Close()
						return out, err
					}
				}
				buf.BodySection = append(buf.BodySection, imapclient.FetchBodySectionBuffer{Section: item.Section, Bytes: b})
			case imapclient.FetchItemDataUID:
				buf.UID = item.UID
			case imapclient.FetchItemDataFlags:
				buf.Flags = item.Flags
			case imapclient.FetchItemDataEnvelope:
				buf.Envelope = item.Envelope
			case imapclient.FetchItemDataInternalDate:
				buf.InternalDate = item.Time
			case imapclient.FetchItemDataRFC822Size:
				buf.RFC822Size = item.Size
			}
		}
		out = append(out, buf)
	}
	if err := cmd.Close(); err != nil {
		return out, err
	}
	return out, nil
}

// abandon closes the connection in the middle of lit. imapclient's reader
// waits for lit to be read to its end before it goes on, and Close waits
// for the reader: lit is read while Close runs, and fails as soon as the
// connection is gone.
func (s *imapSession) abandon(lit io.Reader) {
	closed := make(chan struct{})
	go func() {
		s.cl.Close()
		close(closed)
	}()
	io.Copy(io.Discard, lit)
	<-closed
}

// tooLargeError is a message over the size get reads.
type tooLargeError struct{ size, max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the message is %d bytes, more than the %d keep reads", e.size, e.max)
}

// fetchClass classifies a failed fetch: a message too large to read stays
// so (logic); any other failure as classifyIMAP says.
func fetchClass(err error) connectors.Class {
	var big *tooLargeError
	if errors.As(err, &big) {
		return connectors.Logic
	}
	return classifyIMAP(err)
}
