package slack

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"keep/connectors"
)

// message is one message as the Web API returns it, with the fields scripts
// get.
type message struct {
	TS       string         `json:"ts"`
	User     string         `json:"user"`
	Text     string         `json:"text"`
	ThreadTS string         `json:"thread_ts"`
	Metadata map[string]any `json:"metadata"`
}

func (m message) toMap() map[string]any {
	var meta any
	if m.Metadata != nil {
		meta = m.Metadata
	}
	return map[string]any{"ts": m.TS, "user": m.User, "text": m.Text, "thread_ts": m.ThreadTS, "metadata": meta}
}

// page is one answer of conversations.history or conversations.replies.
type page struct {
	status
	Messages []message `json:"messages"`
	HasMore  bool      `json:"has_more"`
	Meta     struct {
		NextCursor string `json:"next_cursor"`
	} `json:"response_metadata"`
}

// history reads a channel: {channel, oldest, limit, cursor} →
// {messages, has_more, next_cursor}, newest first as Slack sends them. Pass
// next_cursor back as cursor for the next, older page.
func (c *Connector) history(ctx context.Context, params map[string]any) (any, error) {
	channel, err := connectors.String(params, "channel", true)
	if err != nil {
		return nil, err
	}
	oldest, err := tsParam(params, "oldest")
	if err != nil {
		return nil, err
	}
	limit, err := connectors.Int(params, "limit", 100, 1, 1000)
	if err != nil {
		return nil, err
	}
	cursor, err := connectors.String(params, "cursor", false)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if oldest != "" {
		q.Set("oldest", oldest)
	}
	p, err := c.page(ctx, "conversations.history", channel, q, limit, cursor)
	if err != nil {
		return nil, err
	}
	msgs := make([]any, len(p.Messages))
	for i, m := range p.Messages {
		msgs[i] = m.toMap()
	}
	return map[string]any{"messages": msgs, "has_more": p.HasMore, "next_cursor": p.Meta.NextCursor}, nil
}

// page fetches one page of messages, metadata included.
func (c *Connector) page(ctx context.Context, method, channel string, q url.Values, limit int64, cursor string) (*page, error) {
	q.Set("channel", strings.TrimPrefix(channel, "#"))
	q.Set("limit", strconv.FormatInt(limit, 10))
	q.Set("include_all_metadata", "true")
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var p page
	if err := c.api(ctx, method, channel, q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
