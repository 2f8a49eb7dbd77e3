package connectors

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"slices"
	"sync/atomic"
)

// KeyTags makes the names a connector derives from the host's keys (a mail
// send's Message-ID, a Slack post's metadata, a sheet row's hidden id): an
// HMAC under a secret, so that nobody who has seen keys (they are public
// and counted) can make the next one's name. Embedded in a connector, it
// makes the connector Keyed: the host hands it the database's secret, the
// same across restarts, before any call; until then a secret of this
// process's stands in, so a name can't be made outside it either.
type KeyTags struct {
	secret atomic.Pointer[[]byte]
}

// UseSecret takes the host's secret (Keyed); an empty one changes nothing.
func (t *KeyTags) UseSecret(secret []byte) {
	if len(secret) > 0 {
		s := slices.Clone(secret)
		t.secret.Store(&s)
	}
}

// MAC is the HMAC-SHA256 of msg under the secret. Callers put their own
// purpose in msg, so one connector's names are never another's.
func (t *KeyTags) MAC(msg string) []byte {
	s := t.secret.Load()
	if s == nil {
		fresh := make([]byte, 32)
		rand.Read(fresh) // never fails (crypto/rand)
		if t.secret.CompareAndSwap(nil, &fresh) {
			s = &fresh
		} else {
			s = t.secret.Load()
		}
	}
	h := hmac.New(sha256.New, *s)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
