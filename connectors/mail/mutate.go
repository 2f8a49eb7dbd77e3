package mail

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"keep/connectors"
)

// flagChange is what one of the flag mutations does.
type flagChange struct {
	flag imap.Flag
	set  bool
	// key is the result field reporting the flag's state.
	key string
}

var flagChanges = map[string]flagChange{
	"markRead":   {imap.FlagSeen, true, "seen"},
	"markUnread": {imap.FlagSeen, false, "seen"},
	"flag":       {imap.FlagFlagged, true, "flagged"},
	"unflag":     {imap.FlagFlagged, false, "flagged"},
}

// mutationClass classifies the failure of the command that changes
// something (STORE, MOVE). A tagged NO is a definite refusal; a busy or
// rate-limited server is transient; anything else (the connection dropped
// once the command was on its way) may have happened, so it is Uncertain
// and the host reconciles by re-reading the message.
func mutationClass(err error) connectors.Class {
	var ie *imap.Error
	if errors.As(err, &ie) {
		if isBusyCode(string(ie.Code)) {
			return connectors.Transient
		}
		switch ie.Code {
		case imap.ResponseCodeAuthenticationFailed, imap.ResponseCodeAuthorizationFailed, imap.ResponseCodeExpired:
			return connectors.Auth
		}
		if ie.Type == imap.StatusResponseTypeNo || ie.Type == imap.StatusResponseTypeBad {
			return connectors.Logic
		}
	}
	return connectors.Uncertain
}

// isBusyCode is true for the response codes of a server that refused for
// now (busy, rate-limited, over quota): trying again later may work.
// THROTTLED is not in any RFC but is what big providers send.
func isBusyCode(code string) bool {
	switch imap.ResponseCode(strings.ToUpper(code)) {
	case imap.ResponseCodeUnavailable, imap.ResponseCodeLimit, imap.ResponseCodeInUse,
		imap.ResponseCodeServerBug, imap.ResponseCodeOverQuota, "THROTTLED":
		return true
	}
	return false
}

// idParam reads and parses params.id.
func idParam(method string, params map[string]any) (id, mailbox string, validity uint32, uid imap.UID, err error) {
	id, err = stringParam(params, "id")
	if err != nil || id == "" {
		return "", "", 0, 0, connectors.Errorf(connectors.Logic, "%s: id is required (a string from search)", method)
	}
	mailbox, validity, uid, err = parseID(id)
	if err != nil {
		return "", "", 0, 0, connectors.Errorf(connectors.Logic, "%s: %v", method, err)
	}
	return id, mailbox, validity, uid, nil
}

// open selects mailbox (read-only unless write) and checks that ids made
// with validity still point where they did.
func (s *imapSession) open(ctx context.Context, method, id, mailbox string, validity uint32, write bool) error {
	data, err := s.cl.Select(mailbox, &imap.SelectOptions{ReadOnly: !write}).Wait()
	if err != nil {
		return s.c.fail(ctx, classifyIMAP(err), fmt.Sprintf("imap: open mailbox %q", mailbox), err)
	}
	if data.UIDValidity != validity {
		return connectors.Errorf(connectors.Logic, "%s: no message %q: mailbox %q was rebuilt (uidvalidity %d, not %d)", method, id, mailbox, data.UIDValidity, validity)
	}
	return nil
}

// flags returns the flags of uid in the selected mailbox; found is false
// when there is no such message (any more).
func (s *imapSession) flags(ctx context.Context, uid imap.UID) (flags []imap.Flag, found bool, err error) {
	bufs, err := s.cl.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Flags: true}).Collect()
	if err != nil {
		return nil, false, s.c.fail(ctx, classifyIMAP(err), "imap: fetch flags", err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			return b.Flags, true, nil
		}
	}
	return nil, false, nil
}

func hasFlag(flags []imap.Flag, f imap.Flag) bool {
	for _, x := range flags {
		if imap.Flag(canonicalFlag(string(x))) == f {
			return true
		}
	}
	return false
}

// canonicalFlag folds system flags to their canonical case (\seen → \Seen).
func canonicalFlag(f string) string {
	for _, sys := range []imap.Flag{imap.FlagSeen, imap.FlagFlagged, imap.FlagAnswered, imap.FlagDeleted, imap.FlagDraft} {
		if strings.EqualFold(f, string(sys)) {
			return string(sys)
		}
	}
	return f
}

// setFlag implements markRead, markUnread, flag and unflag. Setting a flag
// the message already has is a success, not an error: the outcome asked for
// holds.
func (c *Connector) setFlag(ctx context.Context, method string, params map[string]any) (any, error) {
	ch := flagChanges[method]
	id, mailbox, validity, uid, err := idParam(method, params)
	if err != nil {
		return nil, err
	}
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.open(ctx, method, id, mailbox, validity, true); err != nil {
		return nil, err
	}
	if _, found, err := s.flags(ctx, uid); err != nil {
		return nil, err
	} else if !found {
		return nil, connectors.Errorf(connectors.Logic, "%s: no message %q in %q", method, id, mailbox)
	}
	op := imap.StoreFlagsAdd
	if !ch.set {
		op = imap.StoreFlagsDel
	}
	err = s.cl.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: op, Silent: true, Flags: []imap.Flag{ch.flag}}, nil).Close()
	if err != nil {
		return nil, c.fail(ctx, mutationClass(err), fmt.Sprintf("%s: imap: store %s on %s", method, ch.flag, id), err)
	}
	return map[string]any{"id": id, ch.key: ch.set}, nil
}

// reconcileFlag re-reads the message's flags: the flag as asked is
// Applied, otherwise NotApplied (a STORE is all or nothing).
func (c *Connector) reconcileFlag(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	ch := flagChanges[call.Method]
	id, mailbox, validity, uid, err := idParam(call.Method, call.Params)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	defer s.close()
	if err := s.open(ctx, call.Method, id, mailbox, validity, false); err != nil {
		if connectors.ClassOf(err) == connectors.Logic {
			// The mailbox was rebuilt: the message the call meant is gone,
			// so nothing can have been changed on it that still matters.
			return connectors.NotApplied, nil, nil
		}
		return connectors.Unknown, nil, err
	}
	flags, found, err := s.flags(ctx, uid)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if !found || hasFlag(flags, ch.flag) != ch.set {
		return connectors.NotApplied, nil, nil
	}
	return connectors.Applied, map[string]any{"id": id, ch.key: ch.set}, nil
}

// move implements move: the message leaves its mailbox for params.to. With
// UIDPLUS the result carries its new id.
func (c *Connector) move(ctx context.Context, params map[string]any) (any, error) {
	id, mailbox, validity, uid, err := idParam("move", params)
	if err != nil {
		return nil, err
	}
	to, err := stringParam(params, "to")
	if err != nil || to == "" {
		return nil, connectors.Errorf(connectors.Logic, "move: to is required (the mailbox to move the message to)")
	}
	if to == mailbox {
		return nil, connectors.Errorf(connectors.Logic, "move: the message is already in %q", to)
	}
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.open(ctx, "move", id, mailbox, validity, true); err != nil {
		return nil, err
	}
	if _, found, err := s.flags(ctx, uid); err != nil {
		return nil, err
	} else if !found {
		return nil, connectors.Errorf(connectors.Logic, "move: no message %q in %q", id, mailbox)
	}
	validity, dest, err := s.moveUIDs(ctx, imap.UIDSetNum(uid), to)
	if err != nil {
		return nil, err
	}
	result := map[string]any{"id": nil, "mailbox": to}
	if d, ok := dest.(imap.UIDSet); ok && len(d) > 0 && validity != 0 {
		result["id"] = makeID(to, validity, d[0].Start)
	}
	return result, nil
}

// moveUIDs moves set from the selected mailbox to to, returning the
// destination's UIDVALIDITY and the new UIDs where the server says
// (UIDPLUS). Without MOVE it copies, and only once the copy succeeded
// deletes the originals: imapclient's own fallback pipelines the three
// commands, so a refused COPY would still delete the message.
func (s *imapSession) moveUIDs(ctx context.Context, set imap.UIDSet, to string) (uint32, imap.NumSet, error) {
	c := s.c
	if s.hasMove() {
		data, err := s.cl.Move(set, to).Wait()
		if err != nil {
			return 0, nil, c.fail(ctx, mutationClass(err), fmt.Sprintf("imap: move %s to %q", set, to), err)
		}
		if data == nil {
			return 0, nil, nil
		}
		return data.UIDValidity, data.DestUIDs, nil
	}
	data, err := s.cl.Copy(set, to).Wait()
	if err != nil {
		return 0, nil, c.fail(ctx, mutationClass(err), fmt.Sprintf("imap: copy %s to %q", set, to), err)
	}
	// The copy exists: from here on a failure leaves the message in both
	// places, which reconciliation (source still there) calls not applied.
	if err := s.cl.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return 0, nil, c.fail(ctx, mutationClass(err), fmt.Sprintf("imap: delete %s after copying it", set), err)
	}
	expunge := s.cl.Expunge()
	if s.cl.Caps().Has(imap.CapUIDPlus) {
		expunge = s.cl.UIDExpunge(set)
	}
	if err := expunge.Close(); err != nil {
		return 0, nil, c.fail(ctx, mutationClass(err), fmt.Sprintf("imap: expunge %s after copying it", set), err)
	}
	if data == nil {
		return 0, nil, nil
	}
	return data.UIDValidity, data.DestUIDs, nil
}

// hasMove is true for a server that moves in one command (RFC 6851).
func (s *imapSession) hasMove() bool {
	return s.cl.Caps().Has(imap.CapMove) || s.cl.Caps().Has(imap.CapIMAP4rev2)
}

// reconcileMove looks in the source mailbox: gone is Applied (moved by us,
// or by someone else, and either way there is nothing left to move). Still
// there is NotApplied where the server moves in one command; without MOVE
// the move copied first, and a connection lost after the COPY leaves the
// copy in the destination with the original still in place. Calling that
// not applied would have the move made again, and the message copied
// twice: the copy found (findCopy) is Applied, and the original is removed
// where UIDPLUS lets one message be expunged alone.
func (c *Connector) reconcileMove(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	id, mailbox, validity, uid, err := idParam("move", call.Params)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	to, _ := stringParam(call.Params, "to")
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	defer s.close()
	if err := s.open(ctx, "move", id, mailbox, validity, false); err != nil {
		return connectors.Unknown, nil, err
	}
	_, found, err := s.flags(ctx, uid)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if !found {
		return connectors.Applied, map[string]any{"id": nil, "mailbox": to}, nil
	}
	if s.hasMove() || to == "" {
		return connectors.NotApplied, nil, nil
	}
	copyID, err := s.findCopy(ctx, uid, to)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if copyID == "" {
		return connectors.NotApplied, nil, nil
	}
	result := map[string]any{"id": copyID, "mailbox": to}
	// Finishing the move is tidying: the verdict stands whatever happens.
	if err := s.dropOriginal(ctx, id, mailbox, validity, uid); err != nil {
		result["originalLeft"] = err.Error()
	}
	return connectors.Applied, result, nil
}

// findCopy looks in to for a copy of message uid of the selected mailbox:
// COPY keeps a message's bytes and INTERNALDATE (RFC 3501 §6.4.7), so a
// message there of the same size, date and Message-ID is the copy; the
// same message delivered twice has other Received lines, so another size
// or date. It returns the copy's id, or "" when there is none.
func (s *imapSession) findCopy(ctx context.Context, uid imap.UID, to string) (string, error) {
	info := &imap.FetchOptions{UID: true, InternalDate: true, RFC822Size: true}
	src, err := s.fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Envelope: true, InternalDate: true, RFC822Size: true}, 0)
	if err != nil {
		return "", s.c.fail(ctx, classifyIMAP(err), "imap: fetch the message moved", err)
	}
	var orig *imapclient.FetchMessageBuffer
	for _, b := range src {
		if b.UID == uid {
			orig = b
		}
	}
	if orig == nil || orig.RFC822Size < 1 || orig.InternalDate.IsZero() {
		return "", s.c.failf(connectors.Transient, "imap: the server did not say the size and date of the message moved")
	}
	validity, err := s.examine(ctx, to)
	if err != nil {
		return "", err
	}
	criteria := &imap.SearchCriteria{Larger: orig.RFC822Size - 1, Smaller: orig.RFC822Size + 1}
	if orig.Envelope != nil && orig.Envelope.MessageID != "" {
		criteria.Header = []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: orig.Envelope.MessageID}}
	}
	data, err := s.cl.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return "", s.c.fail(ctx, classifyIMAP(err), "imap: search "+to, err)
	}
	hits := data.AllUIDs()
	if len(hits) == 0 {
		return "", nil
	}
	bufs, err := s.fetch(imap.UIDSetNum(hits...), info, 0)
	if err != nil {
		return "", s.c.fail(ctx, classifyIMAP(err), "imap: fetch from "+to, err)
	}
	sort.Slice(bufs, func(i, j int) bool { return bufs[i].UID < bufs[j].UID })
	for _, b := range bufs {
		if b.RFC822Size == orig.RFC822Size && b.InternalDate.Equal(orig.InternalDate) {
			return makeID(to, validity, b.UID), nil
		}
	}
	return "", nil
}

// dropOriginal finishes a move whose copy was found: it deletes the
// original, only with UIDPLUS (a plain EXPUNGE would also remove every
// other message marked deleted there).
func (s *imapSession) dropOriginal(ctx context.Context, id, mailbox string, validity uint32, uid imap.UID) error {
	if !s.cl.Caps().Has(imap.CapUIDPlus) {
		return fmt.Errorf("the copy is in place, but the original is still in %q: the server cannot remove one message alone (no UIDPLUS)", mailbox)
	}
	if err := s.open(ctx, "move", id, mailbox, validity, true); err != nil {
		return err
	}
	set := imap.UIDSetNum(uid)
	if err := s.cl.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return s.c.fail(ctx, classifyIMAP(err), "imap: delete "+id+" after finding its copy", err)
	}
	if err := s.cl.UIDExpunge(set).Close(); err != nil {
		return s.c.fail(ctx, classifyIMAP(err), "imap: expunge "+id+" after finding its copy", err)
	}
	return nil
}
