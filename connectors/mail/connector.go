package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"keep/connectors"
)

// Connector is the mail connector. It holds no connection: each call dials,
// does its work and hangs up, so a broken connection never outlives a call
// and calls need no locking.
type Connector struct {
	cfg     Config
	tls     *tls.Config
	secrets secretSet
	// maxMessage is the largest message get reads (maxMessage; a test
	// lowers it)
	maxMessage int64
	// maxSearch is the most a search reads of its messages' summaries
	// (maxSearchBytes; a test lowers it)
	maxSearch int64
	// KeyTags keys the Message-IDs of sends (Config.MessageIDSecret, or
	// the host's through UseSecret)
	connectors.KeyTags
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
	_ connectors.Keyed       = (*Connector)(nil)
)

// String names the connector and its account, never the password.
func (c *Connector) String() string { return "mail connector for " + c.cfg.login() }

// Name is "mail" for the preset too; the host adds the "gmail" alias.
func (c *Connector) Name() string { return "mail" }

// InputTypes declares the input types of both names the connector is
// registered under.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{
		"mail":  {"email", "thread"},
		"gmail": {"email", "thread"},
	}
}

// Methods lists every method with its reference (keep help api).
func (c *Connector) Methods() []connectors.Method {
	idArg := connectors.Arg{Name: "id", Type: "string", Required: true, Doc: "a message id from search (mailbox:uidvalidity:uid)"}
	flagMethod := func(name, doc, key string, set bool, example string) connectors.Method {
		return connectors.Method{
			Name: name, Kind: connectors.Mutate, Scope: idScope, Preview: flagPreview(name), Check: idCheck(name),
			Doc:       doc,
			Args:      []connectors.Arg{idArg},
			Result:    fmt.Sprintf("{ id: string, %s: %t }", key, set),
			Reconcile: "re-reads the message's flags: the flag as asked is applied, otherwise not applied",
			Example:   example,
		}
	}
	return []connectors.Method{
		{
			Name: "search", Kind: connectors.Read,
			Doc: fmt.Sprintf("Lists messages of a mailbox newer than a UID cursor, oldest first, optionally filtered on the server. One search reads at most %d MiB of headers and snippets: past that it returns the messages that fit with truncated: true, and a search from its cursor reads on.", maxSearchBytes>>20),
			Args: []connectors.Arg{
				{Name: "mailbox", Type: "string", Doc: "the mailbox to read; default the inbox"},
				{Name: "after", Type: "number | string", Doc: "a cursor from a previous search: only messages with a higher UID"},
				{Name: "from", Type: "string", Doc: "substring of the From header"},
				{Name: "subject", Type: "string", Doc: "substring of the Subject header"},
				{Name: "unseen", Type: "boolean", Doc: "only messages not yet read"},
				{Name: "since", Type: "string", Doc: "only messages received on or after this date (YYYY-MM-DD or RFC 3339)"},
				{Name: "limit", Type: "number", Doc: fmt.Sprintf("at most this many messages, 1 to %d; default %d", maxLimit, defaultLimit)},
			},
			Result:  "{ messages: { id: string, uid: number, messageId: string, from: string, to: string[], cc: string[], subject: string, date: string, snippet: string, seen: boolean, flagged: boolean }[], cursor: number, uidValidity: number, truncated?: true }",
			Example: `const { messages, cursor } = await ctx.mail.search({ after: state.cursor, unseen: true })`,
		},
		{
			Name: "get", Kind: connectors.ReadByID,
			Doc: "Reads one whole message by id: headers, text, and its attachments (names, types, sizes; content on request).",
			Args: []connectors.Arg{
				idArg,
				{Name: "attachments", Type: "boolean", Doc: "include each attachment's content, base64, when it is at most maxBytes"},
				{Name: "maxBytes", Type: "number", Doc: fmt.Sprintf("the largest attachment whose content is included; default and at most %d", maxAttachment)},
			},
			Result:  "{ id: string, uid: number, messageId: string, from: string, to: string[], cc: string[], subject: string, date: string, text: string, inReplyTo: string | null, references: string[], seen: boolean, flagged: boolean, attachments: { name: string, type: string, size: number, content?: string, omitted?: string }[] }",
			Example: `const m = await ctx.mail.get({ id: e.payload.id, attachments: true })`,
		},
		{
			Name: "send", Kind: connectors.Mutate, Scope: sendScope, ScopeKind: connectors.ScopeHosts, Preview: sendPreview, Check: c.sendCheck,
			Doc: "Sends a plain-text message over SMTP with a Message-ID the host chooses, and files it in the Sent folder where the provider does not.",
			Args: []connectors.Arg{
				{Name: "to", Type: "string | string[]", Required: true, Doc: "recipients: addresses or \"Name <addr>\""},
				{Name: "cc", Type: "string | string[]", Doc: "copy recipients"},
				{Name: "bcc", Type: "string | string[]", Doc: "blind copy recipients (shown to the approver)"},
				{Name: "subject", Type: "string", Doc: "one line"},
				{Name: "body", Type: "string", Doc: "the text, UTF-8"},
				{Name: "inReplyTo", Type: "string", Doc: "the messageId this answers, to keep the thread"},
			},
			Result:    "{ messageId: string, sentCopyError?: string }",
			Reconcile: "looks for the host-chosen Message-ID in the Sent folder (found by its \\Sent attribute) and in the inbox, where the copy each send routes to the account's own address arrives; found is applied (the copy is filed in Sent), not found yet is asked again, then put to you",
			Example:   `await ctx.mail.send({ to: "ann@example.org", subject: "Re: " + m.subject, body: "Thanks!", inReplyTo: m.messageId })`,
		},
		flagMethod("markRead", "Marks a message read (the \\Seen flag).", "seen", true, `await ctx.mail.markRead({ id })`),
		flagMethod("markUnread", "Marks a message unread (clears \\Seen).", "seen", false, `await ctx.mail.markUnread({ id })`),
		flagMethod("flag", "Flags a message (\\Flagged; Gmail's star).", "flagged", true, `await ctx.mail.flag({ id })`),
		flagMethod("unflag", "Clears a message's flag (\\Flagged).", "flagged", false, `await ctx.mail.unflag({ id })`),
		{
			Name: "move", Kind: connectors.Mutate, Scope: moveScope, Preview: movePreview, Check: idCheck("move"),
			Doc: "Moves a message to another mailbox (on Gmail: from one label to another).",
			Args: []connectors.Arg{
				idArg,
				{Name: "to", Type: "string", Required: true, Doc: "the mailbox to move it to, e.g. \"Archive\""},
			},
			Result:    "{ id: string | null, mailbox: string, originalLeft?: string }",
			Reconcile: "looks in the source mailbox: gone is applied; still there is not applied, unless the server has no MOVE and the copy keep made first is in the destination (same size, date and Message-ID): that is applied, and the original is removed where the server can remove it alone (UIDPLUS), else originalLeft says so",
			Example:   `await ctx.mail.move({ id, to: "Receipts" })`,
		},
		{
			Name: "label", Kind: connectors.Mutate, Scope: idScope, Preview: labelPreview, Check: idCheck("label"),
			Doc: "Adds and removes Gmail labels on a message (X-GM-LABELS); refused on servers without Gmail's extension.",
			Args: []connectors.Arg{
				idArg,
				{Name: "add", Type: "string | string[]", Doc: "labels to add"},
				{Name: "remove", Type: "string | string[]", Doc: "labels to remove"},
			},
			Result:    "{ id: string, labels: string[] | null }",
			Reconcile: "re-reads the message's labels: all added and none of the removed is applied, otherwise not applied",
			Example:   `await ctx.gmail.label({ id, add: "Receipts", remove: "\\Inbox" })`,
		},
	}
}

// Do runs one call within the configured timeout.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	switch call.Method {
	case "search":
		return c.search(ctx, call.Params)
	case "get":
		return c.get(ctx, call.Params)
	case "send":
		return c.send(ctx, call)
	case "markRead", "markUnread", "flag", "unflag":
		return c.setFlag(ctx, call.Method, call.Params)
	case "move":
		return c.move(ctx, call.Params)
	case "label":
		return c.label(ctx, call.Params)
	}
	return nil, connectors.Errorf(connectors.Logic, "mail has no method %q (it has: search, get, send, markRead, markUnread, flag, unflag, move, label)", call.Method)
}

// idScope is the message's mailbox: a grant can be narrowed to "INBOX".
func idScope(params map[string]any) string {
	id, _ := params["id"].(string)
	mailbox, _, _, err := parseID(id)
	if err != nil {
		return ""
	}
	return mailbox
}

// moveScope is the destination: a grant for "Archive" lets a script file
// mail there and nowhere else.
func moveScope(params map[string]any) string {
	to, _ := params["to"].(string)
	return to
}

func flagPreview(method string) func(map[string]any) string {
	return func(params map[string]any) string {
		id, _ := params["id"].(string)
		return fmt.Sprintf("%s message %s", method, id)
	}
}

func movePreview(params map[string]any) string {
	id, _ := params["id"].(string)
	to, _ := params["to"].(string)
	return fmt.Sprintf("move message %s to %q", id, to)
}

func labelPreview(params map[string]any) string {
	id, _ := params["id"].(string)
	add, remove, _ := labelParams(params)
	return fmt.Sprintf("label message %s: add %q, remove %q", id, add, remove)
}

func idCheck(method string) func(map[string]any) string {
	return func(params map[string]any) string {
		id, _ := params["id"].(string)
		mailbox, _, uid, err := parseID(id)
		if err != nil {
			return "look at the message in your mail client"
		}
		return fmt.Sprintf("look at message %d of %q in your mail client: did %s happen?", uid, mailbox, method)
	}
}

// sendScope is the set of recipient domains, comma-joined, sorted, unique:
// a grant narrowed to "example.com" covers mail to anyone there. Cc and Bcc
// count too, or a grant for one domain would let a script copy another.
func sendScope(params map[string]any) string {
	r, err := parseRecipients(params)
	if err != nil {
		return ""
	}
	return strings.Join(r.domains(), ",")
}

// sendPreview renders a send for a person: every recipient (Bcc included:
// the approver must see who gets it), the subject and the body's length.
func sendPreview(params map[string]any) string {
	r, _ := parseRecipients(params)
	subject, _ := params["subject"].(string)
	body, _ := params["body"].(string)
	s := "send to " + strings.Join(r.to, ", ")
	var extra []string
	if len(r.cc) > 0 {
		extra = append(extra, "cc "+strings.Join(r.cc, ", "))
	}
	if len(r.bcc) > 0 {
		extra = append(extra, "bcc "+strings.Join(r.bcc, ", "))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, "; ") + ")"
	}
	return fmt.Sprintf("%s: %q (%d chars)", s, subject, len([]rune(body)))
}

// sendCheck is what a person does by hand when reconciliation can't tell.
// The Sent folder holds an uncertain send only where the provider files
// sent mail itself: keep files its copy after the server accepted the
// message, so there it would be empty. Then the copy keep routes to the
// account's own address is the place to look, and without it (self_copy =
// false) only a recipient can say.
func (c *Connector) sendCheck(params map[string]any) string {
	r, _ := parseRecipients(params)
	subject, _ := params["subject"].(string)
	to := strings.Join(r.to, ", ")
	if to == "" {
		to = "its recipients"
	}
	switch {
	case c.cfg.ServerFilesSent:
		return fmt.Sprintf("look in your Sent folder for %q to %s", subject, to)
	case c.selfAddress() != "":
		return fmt.Sprintf("look in the inbox of %s for the copy of %q that keep sends you with each message", c.selfAddress(), subject)
	}
	return fmt.Sprintf("ask %s whether %q arrived (keep files its Sent copy only after the server accepts a message, and self_copy is off)", to, subject)
}
