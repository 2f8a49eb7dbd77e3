package sheets

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"

	"keep/connectors"
)

var _ connectors.Keyed = (*Connector)(nil)

// rowTag is what a mutation writes in the hidden column for its key, and
// what Reconcile and a repeated Do look for. The host's keys are public
// (they go to services as Idempotency-Key) and counted (PREFIX-41,
// PREFIX-42): anyone who can edit the sheet, or a program that fills it,
// could write a row carrying the next key, and an append of keep's lost on
// the way would then read as done. The tag is an HMAC of the key under the
// host's secret (connectors.Keyed), the same after a restart, which no one
// without the secret can make. It begins with a letter so that no
// spreadsheet program takes it for a formula (base64url may begin with -).
// No key, no tag: "".
func (c *Connector) rowTag(key string) string {
	if key == "" {
		return ""
	}
	h := hmac.New(sha256.New, *c.secret.Load())
	h.Write([]byte("keep sheets row\x00" + key))
	return tagPrefix + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// tagPrefix marks a tag of rowTag's, as against the raw key an earlier keep
// wrote in the column.
const tagPrefix = "h1."

// UseSecret takes the host's secret for the rows' tags (connectors.Keyed).
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
