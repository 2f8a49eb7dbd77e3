package mail

import (
	"context"

	"github.com/emersion/go-imap/v2"

	"keep/connectors"
)

// Reconcile answers whether a send whose outcome is unknown happened, by
// looking for its Message-ID (derived from the same idempotency key) in the
// Sent folder. Found: Applied, with the result send would have returned.
// Not found: Unknown, never NotApplied, because Gmail files sent mail a
// little after accepting it and a relay may still deliver a queued message;
// the host retries and then asks the user. An IMAP failure is Unknown with
// its classified error (an Auth error there still needs the user).
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if call.Method != "send" {
		return connectors.Unknown, nil, connectors.ErrCannotCheck
	}
	if call.IdempotencyKey == "" {
		return connectors.Unknown, nil, connectors.ErrCannotCheck
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	id := messageIDFor(call.IdempotencyKey)

	s, err := c.dialIMAP(ctx)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	defer s.close()
	if _, err := s.examine(ctx, c.cfg.SentFolder); err != nil {
		return connectors.Unknown, nil, err
	}
	data, err := s.cl.UIDSearch(&imap.SearchCriteria{
		Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: id}},
	}, nil).Wait()
	if err != nil {
		return connectors.Unknown, nil, c.fail(ctx, classifyIMAP(err), "imap: search "+c.cfg.SentFolder, err)
	}
	if len(data.AllUIDs()) == 0 {
		return connectors.Unknown, nil, nil
	}
	return connectors.Applied, map[string]any{"messageId": id}, nil
}
