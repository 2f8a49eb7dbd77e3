package mail

import (
	"context"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"
)

// isSelfCopy is true for a message this connector sent whose copy came back
// to the account: keep's Message-ID, our own From, and our own address in
// neither To nor Cc (the copy travels in the envelope only; a message a
// workflow sent to you on purpose, a digest, lists you and is mail). The
// id is checked under keep's secret, not by its look: a From is easy to
// forge, and a lookalike would otherwise vanish from searches into Sent.
func (c *Connector) isSelfCopy(m map[string]any) bool {
	id, _ := m["messageId"].(string)
	if !c.isOwnMessageID(id) {
		return false
	}
	from, _ := m["from"].(string)
	if !strings.EqualFold(bareAddr(from), c.cfg.From) {
		return false
	}
	self := c.selfAddress()
	for _, k := range []string{"to", "cc"} {
		list, _ := m[k].([]any)
		for _, a := range list {
			if s, _ := a.(string); strings.EqualFold(bareAddr(s), self) {
				return false
			}
		}
	}
	return true
}

// bareAddr is the address of "Name <addr>" or "addr".
func bareAddr(s string) string {
	if i := strings.LastIndexByte(s, '<'); i >= 0 {
		return strings.TrimSuffix(s[i+1:], ">")
	}
	return s
}

// fileSelfCopies tidies the copies sends routed back to the account (UID →
// Message-ID, in the inbox), so they do not pile up there: each is marked
// seen; one whose message Sent lacks is filed there (it is the sent copy,
// where the provider does not file sent mail itself); one Sent already
// holds is removed, but only with UIDPLUS, so that no other message the
// user marked deleted is expunged with it. Nothing here changes what a
// call returns: the copies are bookkeeping.
func (s *imapSession) fileSelfCopies(ctx context.Context, copies map[imap.UID]string) error {
	c := s.c
	sent, err := s.sentFolder(ctx)
	if err != nil {
		return err
	}
	var file, drop imap.UIDSet
	for uid, id := range copies {
		found, err := s.findMessageID(ctx, sent, id, false)
		if err != nil {
			return err
		}
		switch {
		case len(found) > 0:
			drop.AddNum(uid)
		case !c.cfg.ServerFilesSent:
			file.AddNum(uid)
		}
	}
	if _, err := s.cl.Select(c.cfg.Inbox, nil).Wait(); err != nil {
		return c.fail(ctx, classifyIMAP(err), fmt.Sprintf("imap: open mailbox %q", c.cfg.Inbox), err)
	}
	var all imap.UIDSet
	for uid := range copies {
		all.AddNum(uid)
	}
	if err := s.cl.Store(all, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		return c.fail(ctx, classifyIMAP(err), "imap: mark the copies seen", err)
	}
	if len(file) > 0 {
		if _, _, err := s.moveUIDs(ctx, file, sent); err != nil {
			return fmt.Errorf("file the copies in %q: %w", sent, err)
		}
	}
	if len(drop) > 0 && s.cl.Caps().Has(imap.CapUIDPlus) {
		if err := s.cl.Store(drop, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
			return c.fail(ctx, classifyIMAP(err), "imap: remove the copies Sent holds", err)
		}
		if err := s.cl.UIDExpunge(drop).Close(); err != nil {
			return c.fail(ctx, classifyIMAP(err), "imap: remove the copies Sent holds", err)
		}
	}
	return nil
}
