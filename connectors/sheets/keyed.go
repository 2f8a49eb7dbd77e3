package sheets

import (
	"encoding/base64"

	"keep/connectors"
)

var _ connectors.Keyed = (*Connector)(nil)

// rowTag is what a mutation writes in the hidden column for its key, and
// what Reconcile and a repeated Do look for. The host's keys are public
// (they go to services as Idempotency-Key) and counted (PREFIX-41,
// PREFIX-42): anyone who can edit the sheet, or a program that fills it,
// could write a row carrying the next key, and an append of keep's lost on
// the way would then read as done. The tag is an HMAC of the key under the
// host's secret (connectors.KeyTags), the same after a restart, which no
// one without the secret can make. It begins with a letter so that no
// spreadsheet program takes it for a formula (base64url may begin with -).
// No key, no tag: "".
func (c *Connector) rowTag(key string) string {
	if key == "" {
		return ""
	}
	return tagPrefix + base64.RawURLEncoding.EncodeToString(c.MAC("keep sheets row\x00" + key)[:18])
}

// tagPrefix marks a tag of rowTag's, as against the raw key an earlier keep
// wrote in the column.
const tagPrefix = "h1."
