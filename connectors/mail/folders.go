package mail

import (
	"context"

	"github.com/emersion/go-imap/v2"

	"keep/connectors"
)

// sentFolder is the Sent folder: sent_folder when configured, else the
// mailbox the server marks \Sent (RFC 6154). Names differ between servers
// and languages ("Sent", "Sent Items", "[Gmail]/Sent Mail", "Gesendet"),
// the attribute does not.
func (s *imapSession) sentFolder(ctx context.Context) (string, error) {
	if s.c.cfg.SentFolder != "" {
		return s.c.cfg.SentFolder, nil
	}
	var opts *imap.ListOptions
	caps := s.cl.Caps()
	if caps.Has(imap.CapSpecialUse) {
		opts = &imap.ListOptions{ReturnSpecialUse: true}
	}
	// Servers without SPECIAL-USE in their capabilities often still mark
	// the attributes in a plain LIST (Gmail did with XLIST): look anyway.
	boxes, err := s.cl.List("", "*", opts).Collect()
	if err != nil {
		return "", s.c.fail(ctx, classifyIMAP(err), "imap: list mailboxes", err)
	}
	for _, b := range boxes {
		for _, a := range b.Attrs {
			if a == imap.MailboxAttrSent {
				return b.Mailbox, nil
			}
		}
	}
	return "", s.c.failf(connectors.Permission, "imap: no mailbox is marked \\Sent (RFC 6154 SPECIAL-USE) on %s; set sent_folder", s.c.cfg.IMAP)
}
