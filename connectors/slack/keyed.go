package slack

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"

	"keep/connectors"
)

var _ connectors.Keyed = (*Connector)(nil)

// postTag is what a post carries in its metadata for the mutation key and
// what Reconcile looks for. The host's keys are public and counted
// (PREFIX-41, PREFIX-42): an app that reads the channel sees one in a
// message of keep's and could post the next one itself, and a post of
// keep's lost on the way would then read as done. The tag is an HMAC of
// the key under the host's secret (connectors.Keyed), the same after a
// restart, which no one without the secret can make.
func (c *Connector) postTag(key string) string {
	h := hmac.New(sha256.New, *c.secret.Load())
	h.Write([]byte("keep slack post\x00" + key))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// UseSecret takes the host's secret for the posts' tags
// (connectors.Keyed).
func (c *Connector) UseSecret(secret []byte) {
	if len(secret) > 0 {
		s := slices.Clone(secret)
		c.secret.Store(&s)
	}
}

// newSecret is the secret until the host hands its own: one of this
// process's, so a tag can't be made outside it either.
func newSecret() *[]byte {
	s := make([]byte, 32)
	rand.Read(s) // never fails (crypto/rand)
	return &s
}
