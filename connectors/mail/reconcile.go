package mail

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"

	"keep/connectors"
)

// Reconcile answers whether a mutation whose outcome is unknown happened,
// against the real server.
//
// A send is looked for by its Message-ID (derived from the same idempotency
// key under the host's secret: see messageIDFor) in the Sent folder, then
// in the inbox, where the copy each send routes back to the account
// arrives once the server has delivered it. A copy found there is filed in
// Sent (where the provider does not file sent mail itself) or marked seen,
// so the user's inbox does not fill with them.
// Not found: Unknown, never NotApplied, because delivery and filing take a
// moment and a relay may still deliver a queued message; the host retries
// and then asks the user. An IMAP failure is Unknown with its classified
// error (an Auth error there still needs the user).
//
// The flag mutations and move re-read the message (see mutate.go), labels
// re-read its Gmail labels.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	switch call.Method {
	case "send":
		return c.reconcileSend(ctx, call)
	case "markRead", "markUnread", "flag", "unflag":
		return c.reconcileFlag(ctx, call)
	case "move":
		return c.reconcileMove(ctx, call)
	case "label":
		return c.reconcileLabel(ctx, call)
	}
	return connectors.Unknown, nil, connectors.ErrCannotCheck
}

func (c *Connector) reconcileSend(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if call.IdempotencyKey == "" {
		return connectors.Unknown, nil, connectors.ErrCannotCheck
	}
	// Only the id derived under the secret is looked for. Sends made before
	// it carried ids anyone could work out from the key; a message with
	// one proves nothing, so such a send left uncertain across the upgrade
	// ends with the person asked.
	id := c.messageIDFor(call.IdempotencyKey)
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	defer s.close()
	sent, sentErr := s.sentFolder(ctx)
	inSent := false
	if sentErr == nil {
		var uids []imap.UID
		uids, err = s.findMessageID(ctx, sent, id, false)
		if err != nil {
			return connectors.Unknown, nil, err
		}
		inSent = len(uids) > 0
	}
	if inSent {
		return connectors.Applied, map[string]any{"messageId": id}, nil
	}
	if c.selfAddress() == "" {
		return connectors.Unknown, nil, sentErr
	}
	uids, err := s.findMessageID(ctx, c.cfg.Inbox, id, false)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if len(uids) == 0 {
		return connectors.Unknown, nil, sentErr
	}
	result := map[string]any{"messageId": id, "confirmedBy": "the copy delivered to " + c.selfAddress()}
	// A send addressed to the account itself arrived as mail, not as a
	// copy: it stays where it is.
	if r, err := parseRecipients(call.Params); err == nil && containsFold(r.all(), c.selfAddress()) {
		return connectors.Applied, result, nil
	}
	// Filing is tidying: the verdict stands whatever happens to it.
	copies := map[imap.UID]string{}
	for _, u := range uids {
		copies[u] = id
	}
	if err := s.fileSelfCopies(ctx, copies); err != nil {
		result["sentCopyError"] = err.Error()
	}
	return connectors.Applied, result, nil
}

// findMessageID returns the UIDs of the messages with Message-ID id in
// mailbox, opened read-write when write (to file what is found).
func (s *imapSession) findMessageID(ctx context.Context, mailbox, id string, write bool) ([]imap.UID, error) {
	if _, err := s.cl.Select(mailbox, &imap.SelectOptions{ReadOnly: !write}).Wait(); err != nil {
		return nil, s.c.fail(ctx, classifyIMAP(err), fmt.Sprintf("imap: open mailbox %q", mailbox), err)
	}
	data, err := s.cl.UIDSearch(&imap.SearchCriteria{
		Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: id}},
	}, nil).Wait()
	if err != nil {
		return nil, s.c.fail(ctx, classifyIMAP(err), "imap: search "+mailbox, err)
	}
	return data.AllUIDs(), nil
}
