package mail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"

	imapv1 "github.com/emersion/go-imap"
	clientv1 "github.com/emersion/go-imap/client"

	"keep/connectors"
)

// Gmail labels go through Gmail's IMAP extension (X-GM-EXT-1: STORE and
// FETCH of X-GM-LABELS). go-imap v2 has no way to send an item it does not
// know, so this one method speaks through go-imap v1, whose client sends
// any command and keeps unknown FETCH items.

const capGmail = "X-GM-EXT-1"

// gmailSession is a logged-in go-imap v1 connection.
type gmailSession struct {
	c    *Connector
	cl   *clientv1.Client
	stop func() bool
	// guard is what the client reads through; its refusal is the cause
	// of the failure the client reports as a closed connection
	guard *v1Guard
}

func (g *gmailSession) close() {
	_ = g.cl.Logout()
	g.stop()
	_ = g.cl.Terminate()
}

func (c *Connector) dialGmail(ctx context.Context) (*gmailSession, error) {
	cr, conn, err := c.connectIMAP(ctx)
	if err != nil {
		return nil, err
	}
	addr := c.cfg.IMAP
	var rest []byte
	if c.cfg.tlsModeFor(addr) == TLSStartTLS {
		tc, err := startTLSv1(ctx, conn, c.tlsConfig(addr))
		if err != nil {
			conn.Close()
			return nil, c.fail(ctx, classifyIMAP(err), "imap: starttls with "+addr, err)
		}
		conn = tc
	} else if rest, err = greetV1(conn); err != nil {
		conn.Close()
		return nil, c.fail(ctx, classifyIMAP(err), "imap: greeting from "+addr, err)
	}
	cl, guard, err := newClientV1(conn, rest)
	if err != nil {
		conn.Close()
		err = guard.cause(err)
		return nil, c.fail(ctx, classifyIMAP(err), "imap: greeting from "+addr, err)
	}
	g := &gmailSession{c: c, cl: cl, stop: context.AfterFunc(ctx, func() { _ = cl.Terminate() }), guard: guard}
	err = g.login(cr)
	if err != nil && cr.bearer && v1LoginClass(err) == connectors.Auth {
		// A refused token may just have expired: refresh once.
		c.invalidate()
		if cr, err = c.credentials(ctx); err != nil {
			g.close()
			return nil, err
		}
		err = g.login(cr)
	}
	if err != nil {
		g.close()
		err = guard.cause(err)
		return nil, c.refusal(cr, err, c.fail(ctx, v1LoginClass(err), "imap: login as "+cr.user, err))
	}
	return g, nil
}

func (g *gmailSession) login(cr creds) error {
	if !cr.bearer && g.c.cfg.Auth == "" {
		return g.cl.Login(cr.user, cr.secret)
	}
	caps, err := g.cl.Capability()
	if err != nil {
		return err
	}
	var offered []string
	for cp := range caps {
		if m, ok := strings.CutPrefix(cp, "AUTH="); ok {
			offered = append(offered, m)
		}
	}
	mech, err := g.c.mechanism(cr, offered)
	if err != nil {
		return err
	}
	return g.cl.Authenticate(saslClient(mech, cr, g.c.cfg.IMAP))
}

// v1LoginClass: go-imap v1 reports a NO as a plain error, so anything that
// is not the connection failing is the server refusing the login.
func v1LoginClass(err error) connectors.Class {
	var ce *connectors.Error
	if errors.As(err, &ce) {
		return ce.Class
	}
	var bad *errV1Response
	if errors.As(err, &bad) {
		return connectors.Logic
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection closed") {
		return classifyIMAP(err)
	}
	return connectors.Auth
}

// labelParams reads add and remove: a label or an array of them.
func labelParams(params map[string]any) (add, remove []string, err error) {
	for _, k := range []string{"add", "remove"} {
		var list []string
		switch v := params[k].(type) {
		case nil:
		case string:
			if v != "" {
				list = []string{v}
			}
		case []any:
			for i, e := range v {
				s, ok := e.(string)
				if !ok || s == "" {
					return nil, nil, fmt.Errorf("%s[%d] is not a label name", k, i)
				}
				list = append(list, s)
			}
		default:
			return nil, nil, fmt.Errorf("%s is %T, not a label or an array of labels", k, v)
		}
		for _, l := range list {
			if strings.ContainsAny(l, "\r\n") {
				return nil, nil, fmt.Errorf("%s: label %q holds a line break", k, l)
			}
		}
		if k == "add" {
			add = list
		} else {
			remove = list
		}
	}
	if len(add) == 0 && len(remove) == 0 {
		return nil, nil, errors.New("add or remove is required (a label or an array of labels)")
	}
	return add, remove, nil
}

// openLabels logs in, checks the server is Gmail, and selects the
// message's mailbox.
func (c *Connector) openLabels(ctx context.Context, method string, params map[string]any, write bool) (*gmailSession, string, uint32, error) {
	id, mailbox, validity, uid, err := idParam(method, params)
	if err != nil {
		return nil, "", 0, err
	}
	g, err := c.dialGmail(ctx)
	if err != nil {
		return nil, "", 0, err
	}
	if ok, err := g.cl.Support(capGmail); err != nil {
		g.close()
		err = g.guard.cause(err)
		return nil, "", 0, c.fail(ctx, classifyIMAP(err), "imap: capability", err)
	} else if !ok {
		g.close()
		return nil, "", 0, connectors.Errorf(connectors.Logic,
			"%s: labels are Gmail's (the X-GM-EXT-1 extension) and %s does not offer them; use move to file the message in a folder", method, c.cfg.IMAP)
	}
	status, err := g.cl.Select(mailbox, !write)
	if err != nil {
		g.close()
		err = g.guard.cause(err)
		return nil, "", 0, c.fail(ctx, classifyIMAP(err), fmt.Sprintf("imap: open mailbox %q", mailbox), err)
	}
	if status.UidValidity != validity {
		g.close()
		return nil, "", 0, connectors.Errorf(connectors.Logic, "%s: no message %q: mailbox %q was rebuilt", method, id, mailbox)
	}
	return g, id, uint32(uid), nil
}

// labels fetches the message's labels; found is false when it is gone.
func (g *gmailSession) labels(ctx context.Context, uid uint32) (labels []string, found bool, err error) {
	set := new(imapv1.SeqSet)
	set.AddNum(uid)
	ch := make(chan *imapv1.Message, 4)
	done := make(chan error, 1)
	go func() { done <- g.cl.UidFetch(set, []imapv1.FetchItem{imapv1.FetchUid, "X-GM-LABELS"}, ch) }()
	for m := range ch {
		if m.Uid != uid {
			continue
		}
		found = true
		labels = []string{}
		list, _ := m.Items["X-GM-LABELS"].([]any)
		for _, l := range list {
			if s, err := imapv1.ParseString(l); err == nil {
				labels = append(labels, s)
			}
		}
	}
	if err := <-done; err != nil {
		err = g.guard.cause(err)
		return nil, false, g.c.fail(ctx, classifyIMAP(err), "imap: fetch labels", err)
	}
	sort.Strings(labels)
	return labels, found, nil
}

// label implements label: add and remove Gmail labels on one message.
func (c *Connector) label(ctx context.Context, params map[string]any) (any, error) {
	add, remove, err := labelParams(params)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "label: %v", err)
	}
	g, id, uid, err := c.openLabels(ctx, "label", params, true)
	if err != nil {
		return nil, err
	}
	defer g.close()
	if _, found, err := g.labels(ctx, uid); err != nil {
		return nil, err
	} else if !found {
		return nil, connectors.Errorf(connectors.Logic, "label: no message %q", id)
	}
	for _, op := range []struct {
		sign   string
		labels []string
	}{{"+", add}, {"-", remove}} {
		if len(op.labels) == 0 {
			continue
		}
		values := make([]any, len(op.labels))
		for i, l := range op.labels {
			values[i] = l
		}
		cmd := &imapv1.Command{Name: "UID", Arguments: []any{
			imapv1.RawString("STORE"), imapv1.RawString(fmt.Sprint(uid)),
			imapv1.RawString(op.sign + "X-GM-LABELS"), values,
		}}
		status, err := g.cl.Execute(cmd, nil)
		if err != nil {
			// The command may have reached the server.
			return nil, c.fail(ctx, connectors.Uncertain, "label: imap: store labels on "+id, g.guard.cause(err))
		}
		if err := status.Err(); err != nil {
			class := connectors.Logic
			if isBusyCode(string(status.Code)) {
				class = connectors.Transient
			}
			return nil, c.fail(ctx, class, "label: imap: store labels on "+id, err)
		}
	}
	labels, _, err := g.labels(ctx, uid)
	if err != nil {
		// Stored; the re-read is only for the result.
		return map[string]any{"id": id, "labels": nil}, nil
	}
	return map[string]any{"id": id, "labels": toAny(labels)}, nil
}

// reconcileLabel re-reads the labels: every label asked to be added there
// and every one asked to be removed gone is Applied; otherwise NotApplied.
func (c *Connector) reconcileLabel(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	add, remove, err := labelParams(call.Params)
	if err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "label: %v", err)
	}
	g, id, uid, err := c.openLabels(ctx, "label", call.Params, false)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	defer g.close()
	labels, found, err := g.labels(ctx, uid)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if !found {
		return connectors.NotApplied, nil, nil
	}
	for _, l := range add {
		if !contains(labels, l) {
			return connectors.NotApplied, nil, nil
		}
	}
	for _, l := range remove {
		if contains(labels, l) {
			return connectors.NotApplied, nil, nil
		}
	}
	return connectors.Applied, map[string]any{"id": id, "labels": toAny(labels)}, nil
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
