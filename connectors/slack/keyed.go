package slack

import (
	"encoding/base64"

	"keep/connectors"
)

var _ connectors.Keyed = (*Connector)(nil)

// postTag is what a post carries in its metadata for the mutation key and
// what Reconcile looks for. The host's keys are public and counted
// (PREFIX-41, PREFIX-42): an app that reads the channel sees one in a
// message of keep's and could post the next one itself, and a post of
// keep's lost on the way would then read as done. The tag is an HMAC of
// the key under the host's secret (connectors.KeyTags), the same after a
// restart, which no one without the secret can make.
func (c *Connector) postTag(key string) string {
	return base64.RawURLEncoding.EncodeToString(c.MAC("keep slack post\x00" + key)[:18])
}
