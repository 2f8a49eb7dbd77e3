package slack

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"keep/connectors"
)

// Reconcile pages through these many recent messages at most: a post being
// reconciled is minutes or hours old, not weeks.
const (
	reconcilePage  = 200
	reconcilePages = 5
)

// Reconcile implements connectors.Reconciler for post: it looks through the
// channel's recent history (or the thread's replies) for a message whose
// metadata carries the mutation's key.
//
// Not finding it is Unknown, not NotApplied: history can lag behind a post,
// and the message may be older than the pages searched. The host retries,
// then asks the user. Webhook posts carry no metadata and have no ts:
// ErrCannotCheck.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if call.Method != "post" {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Internal, "slack.%s is not a mutation", call.Method)
	}
	p, err := parsePost(call.Params)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	switch {
	case c.viaWebhook(p):
		return connectors.Unknown, nil, fmt.Errorf("a webhook post leaves nothing to search for: %w", connectors.ErrCannotCheck)
	case call.IdempotencyKey == "":
		return connectors.Unknown, nil, fmt.Errorf("a post without an idempotency key carries no metadata: %w", connectors.ErrCannotCheck)
	case p.channel == "":
		return connectors.Unknown, nil, fmt.Errorf("a post without a channel: %w", connectors.ErrCannotCheck)
	}
	channel := strings.TrimPrefix(p.channel, "#")
	method, q := "conversations.history", url.Values{}
	if p.threadTS != "" {
		// Replies only show in conversations.history when broadcast.
		method = "conversations.replies"
		q.Set("ts", p.threadTS)
	}
	tag := c.postTag(call.IdempotencyKey)
	cursor := ""
	for range reconcilePages {
		pg, err := c.page(ctx, method, channel, cloneValues(q), reconcilePage, cursor)
		if err != nil {
			switch slackCode(err) {
			case "channel_not_found", "not_in_channel", "no_permission", "access_denied":
				// Web API history takes channel IDs only, while posts also
				// take names; a bot that left, or was never let in, can't
				// read the channel, and asking again won't let it.
				return connectors.Unknown, nil, fmt.Errorf("%s of %q: %v: %w", method, p.channel, err, connectors.ErrCannotCheck)
			}
			return connectors.Unknown, nil, err
		}
		for _, m := range pg.Messages {
			if hmac.Equal([]byte(keepID(m)), []byte(tag)) {
				return connectors.Applied, map[string]any{"channel": channel, "ts": m.TS}, nil
			}
		}
		if !pg.HasMore || pg.Meta.NextCursor == "" {
			break
		}
		cursor = pg.Meta.NextCursor
	}
	return connectors.Unknown, nil, nil
}

// keepID is the key in a message's metadata, if keep posted it.
func keepID(m message) string {
	if m.Metadata == nil || m.Metadata["event_type"] != eventType {
		return ""
	}
	payload, _ := m.Metadata["event_payload"].(map[string]any)
	id, _ := payload["keep_id"].(string)
	return id
}

// slackCode is the ok:false code in an error from api, or "".
func slackCode(err error) string {
	var r *redacted
	if errors.As(err, &r) {
		return r.code
	}
	return ""
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}
