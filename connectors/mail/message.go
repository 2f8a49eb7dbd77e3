package mail

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	netmail "net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // decode the non-UTF-8 charsets real mail uses
	gomail "github.com/emersion/go-message/mail"
)

// messageIDFor is the Message-ID of the send of key: the same for every
// attempt of one mutation, so that Reconcile, in this process or the next
// after a crash, looks for the message a lost attempt may have sent.
//
// The host's keys are public ("keep-INSTALL-N": other connectors pass
// them to services, and the install part used to be in every Message-ID),
// so an id made from the key alone could be worked out by anyone, and a
// message carrying it taken for keep's own send (Reconcile) or its own
// copy (isSelfCopy). The id is an HMAC of the key under a secret the host
// holds instead (Config.MessageIDSecret). Storing a random id with the
// mutation before the send would need the ledger to hand it over; the
// connector sees only the key, so it derives. The tag (128 bits) names the
// send; a check (64 bits) of the tag under the same secret lets
// isOwnMessageID tell keep's ids from lookalikes without knowing the key.
// Base64url keeps it within a Message-ID's atext.
func (c *Connector) messageIDFor(key string) string {
	tag := c.MAC("keep mail Message-ID\x00" + key)[:idTagBytes]
	id := make([]byte, 0, idTagBytes+idCheckBytes)
	id = append(append(id, tag...), c.MAC("keep mail Message-ID check\x00" + string(tag))[:idCheckBytes]...)
	return "<keep-" + base64.RawURLEncoding.EncodeToString(id) + "@keep.invalid>"
}

const (
	idTagBytes   = 16
	idCheckBytes = 8
)

// isOwnMessageID is true for an id messageIDFor made under this secret.
func (c *Connector) isOwnMessageID(id string) bool {
	s, ok := strings.CutPrefix(id, "<keep-")
	if !ok {
		return false
	}
	if s, ok = strings.CutSuffix(s, "@keep.invalid>"); !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != idTagBytes+idCheckBytes {
		return false
	}
	want := c.MAC("keep mail Message-ID check\x00" + string(b[:idTagBytes]))[:idCheckBytes]
	return hmac.Equal(b[idTagBytes:], want)
}

// bracketID puts a message id in angle brackets, the form headers use and
// every result returns.
func bracketID(id string) string {
	id = strings.TrimSpace(id)
	if id == "" || strings.HasPrefix(id, "<") {
		return id
	}
	return "<" + id + ">"
}

// outgoing is a message to send.
type outgoing struct {
	from, fromName string
	to, cc         []*netmail.Address // names as given (checked: no control characters)
	subject, body  string
	messageID      string // with brackets
	inReplyTo      string // with brackets, or empty
	references     []string
	date           time.Time
}

// build renders m as an RFC 5322 message: a single text/plain UTF-8 part,
// quoted-printable so long lines and non-ASCII survive any relay, with CRLF
// line ends.
func (m outgoing) build() ([]byte, error) {
	var h gomail.Header
	h.SetDate(m.date)
	h.SetAddressList("From", []*gomail.Address{{Name: m.fromName, Address: m.from}})
	h.SetAddressList("To", toAddrs(m.to))
	if len(m.cc) > 0 {
		h.SetAddressList("Cc", toAddrs(m.cc))
	}
	h.SetSubject(m.subject)
	h.SetMessageID(strings.Trim(m.messageID, "<>"))
	if m.inReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{strings.Trim(m.inReplyTo, "<>")})
	}
	if len(m.references) > 0 {
		ids := make([]string, len(m.references))
		for i, r := range m.references {
			ids[i] = strings.Trim(r, "<>")
		}
		h.SetMsgIDList("References", ids)
	}
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	h.Set("Content-Transfer-Encoding", "quoted-printable")

	var buf bytes.Buffer
	w, err := gomail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, err
	}
	body := strings.ReplaceAll(strings.ReplaceAll(m.body, "\r\n", "\n"), "\n", "\r\n")
	if _, err := io.WriteString(w, body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func toAddrs(list []*netmail.Address) []*gomail.Address {
	out := make([]*gomail.Address, len(list))
	for i, a := range list {
		out[i] = &gomail.Address{Name: a.Name, Address: a.Address}
	}
	return out
}

// parsed is what get returns about one message.
type parsed struct {
	messageID   string
	from        string
	to, cc      []any
	subject     string
	date        time.Time
	text        string
	inReplyTo   string
	references  []any
	attachments []attachment
}

// maxAttachment is the most attachment content get returns inline (before
// base64), per attachment.
const maxAttachment = 10 << 20

// maxMessage is the largest message get reads into memory: above what the
// big providers accept (Gmail 50 MB, Outlook 150 MB are the outliers with
// base64 counted), so only a server gone wrong or a mailbox keep has no
// business reading whole meets it.
const maxMessage = 160 << 20

// attachment is one attached file of a message, its content kept only up
// to maxAttachment bytes.
type attachment struct {
	name, typ string
	size      int
	data      []byte // nil when larger than maxAttachment
}

// attachmentList renders the attachments for get: name, type and size
// always, the content (base64) when asked and at most maxBytes.
func (p parsed) attachmentList(withContent bool, maxBytes int) []any {
	out := []any{}
	for _, a := range p.attachments {
		m := map[string]any{"name": a.name, "type": a.typ, "size": int64(a.size)}
		if withContent {
			if a.data != nil && a.size <= maxBytes {
				m["content"] = base64.StdEncoding.EncodeToString(a.data)
			} else {
				m["omitted"] = fmt.Sprintf("%d bytes is over the limit of %d", a.size, maxBytes)
			}
		}
		out = append(out, m)
	}
	return out
}

// attachmentsOf parses raw for its attachments.
func attachmentsOf(raw []byte) []attachment {
	e, _ := message.Read(bytes.NewReader(raw))
	if e == nil {
		return nil
	}
	return attachments(e)
}

// attachments walks e for its attached files: parts marked attachment, and
// named parts that are not text shown inline.
func attachments(e *message.Entity) []attachment {
	var out []attachment
	_ = walkParts(e, func(part *message.Entity, err error) error {
		if part == nil || part.MultipartReader() != nil {
			return nil
		}
		mt, ctParams, _ := part.Header.ContentType()
		disp, dParams, _ := part.Header.ContentDisposition()
		name := dParams["filename"]
		if name == "" {
			name = ctParams["name"]
		}
		isText := mt == "" || strings.HasPrefix(mt, "text/")
		// Attached, or a named file that is not the text of the message
		// (an inline image).
		if disp != "attachment" && (name == "" || isText) {
			return nil
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		var buf bytes.Buffer
		n, _ := io.Copy(&buf, io.LimitReader(part.Body, maxAttachment+1))
		size := int(n)
		if n > maxAttachment {
			rest, _ := io.Copy(io.Discard, part.Body)
			size += int(rest)
		}
		a := attachment{name: name, typ: mt, size: size}
		if size <= maxAttachment {
			a.data = buf.Bytes()
		}
		out = append(out, a)
		return nil
	})
	return out
}

// parseMessage reads a raw message. It is lenient on purpose: search parses
// only the first bytes of each message, and real mail is often slightly
// malformed, so whatever could be read is kept and decoding errors are
// ignored (a charset we can't decode yields the raw bytes).
func parseMessage(raw []byte) parsed {
	var p parsed
	// An unknown charset or encoding still yields an entity; only a broken
	// header yields none.
	e, _ := message.Read(bytes.NewReader(raw))
	if e == nil {
		p.text = readAllLenient(bytes.NewReader(raw))
		p.to, p.cc, p.references = []any{}, []any{}, []any{}
		return p
	}
	h := gomail.Header{Header: e.Header}
	p.messageID, _ = h.MessageID()
	p.messageID = bracketID(p.messageID)
	p.from = firstOr(formatAddrs(&h, "From"), "")
	p.to = formatAddrs(&h, "To")
	p.cc = formatAddrs(&h, "Cc")
	if s, err := h.Subject(); err == nil {
		p.subject = s
	} else {
		p.subject = h.Get("Subject")
	}
	p.date, _ = h.Date()
	if ids, _ := h.MsgIDList("In-Reply-To"); len(ids) > 0 {
		p.inReplyTo = bracketID(ids[0])
	}
	refs, _ := h.MsgIDList("References")
	p.references = []any{}
	for _, r := range refs {
		p.references = append(p.references, bracketID(r))
	}
	p.text = bodyText(e)
	return p
}

func firstOr(list []any, def string) string {
	if len(list) > 0 {
		return list[0].(string)
	}
	return def
}

// formatAddrs renders an address header as display strings, "Name <addr>"
// or "addr", quoting a name that would otherwise not parse back: a script
// can pass them straight to send's to.
func formatAddrs(h *gomail.Header, key string) []any {
	out := []any{}
	list, err := h.AddressList(key)
	if err != nil {
		// Unparseable: keep the decoded raw text rather than nothing.
		if raw := h.Get(key); raw != "" {
			dec, derr := new(mime.WordDecoder).DecodeHeader(raw)
			if derr != nil {
				dec = raw
			}
			out = append(out, dec)
		}
		return out
	}
	for _, a := range list {
		out = append(out, formatAddr(a.Name, a.Address))
	}
	return out
}

func formatAddr(name, addr string) string {
	if name == "" {
		return addr
	}
	if strings.ContainsAny(name, `()<>[]:;@\,."`) {
		name = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
	}
	return name + " <" + addr + ">"
}

// bodyText returns the first text/plain part of e, or else the first
// text/html part stripped to text.
func bodyText(e *message.Entity) string {
	var plain, htmlText string
	var havePlain, haveHTML bool
	_ = walkParts(e, func(part *message.Entity, err error) error {
		if err != nil && part == nil {
			return nil
		}
		if havePlain {
			return errStopWalk
		}
		mt, _, _ := part.Header.ContentType()
		if mt == "" {
			mt = "text/plain" // RFC 2045's default
		}
		disp, _, _ := part.Header.ContentDisposition()
		if disp == "attachment" {
			return nil
		}
		switch mt {
		case "text/plain":
			plain, havePlain = readAllLenient(part.Body), true
			return errStopWalk
		case "text/html":
			if !haveHTML {
				htmlText, haveHTML = htmlToText(readAllLenient(part.Body)), true
			}
		}
		return nil
	})
	if havePlain {
		return plain
	}
	return htmlText
}

var errStopWalk = errors.New("stop")

// maxDepth bounds how deep a message's multiparts are walked. Real mail
// nests a few levels (mixed, alternative, related); go-message reads each
// level through the readers of every level above it, so a message of
// nothing but nested boundaries costs time cubic in its depth (8000 levels,
// under half a megabyte, took half a minute), and parsing does not watch
// the call's context. Deeper parts are skipped unread.
const maxDepth = 32

// walkParts is message.Entity.Walk with the depth bounded by maxDepth: fn
// sees e and every part within maxDepth levels of it, in order, with the
// unknown charset or encoding error of a part it can still read.
func walkParts(e *message.Entity, fn func(part *message.Entity, err error) error) error {
	return walkDepth(e, nil, 0, fn)
}

func walkDepth(part *message.Entity, partErr error, depth int, fn func(*message.Entity, error) error) error {
	if err := fn(part, partErr); err != nil {
		return err
	}
	mr := part.MultipartReader()
	if mr == nil || depth >= maxDepth {
		return nil
	}
	for {
		p, err := mr.NextPart()
		switch {
		case err == io.EOF:
			return nil
		case err != nil && !message.IsUnknownEncoding(err) && !message.IsUnknownCharset(err):
			return err
		}
		if err := walkDepth(p, err, depth+1, fn); err != nil {
			return err
		}
	}
}

// readAllLenient keeps what could be read before an error: a truncated
// search fetch ends mid-part, and half a snippet beats none.
func readAllLenient(r io.Reader) string {
	b, _ := io.ReadAll(r)
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return string(b)
}

var (
	reDropped = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)\s*>`)
	reComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	reBreak   = regexp.MustCompile(`(?i)<(br|/p|/div|/h[1-6]|/li|/tr|p|div|li|tr|h[1-6])\b[^>]*>`)
	reTag     = regexp.MustCompile(`(?s)<[^>]*>`)
	reSpaces  = regexp.MustCompile(`[ \t\r\f\v]+`)
	reBlank   = regexp.MustCompile(`\n\s*\n+`)
)

// htmlToText strips HTML to readable text: scripts, styles and comments go,
// block ends become line breaks, entities are decoded. Good enough for
// reading mail; not a renderer.
func htmlToText(s string) string {
	s = reDropped.ReplaceAllString(s, "")
	s = reComment.ReplaceAllString(s, "")
	s = reBreak.ReplaceAllString(s, "\n")
	s = reTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(reSpaces.ReplaceAllString(l, " "))
	}
	s = strings.Join(lines, "\n")
	s = reBlank.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// snippet is the first ~200 characters of text, whitespace collapsed.
func snippet(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= 200 {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:200])) + "…"
}
