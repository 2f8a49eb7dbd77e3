package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Raw is decoded by messages, to the number asked for.
	Raw      json.RawMessage `json:"messages"`
	Messages []message       `json:"-"`
	HasMore  bool            `json:"has_more"`
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
	msgs, err := decodeMessages(p.Raw, int(limit))
	if err != nil {
		return nil, c.noSense(method, false, err)
	}
	p.Messages, p.Raw = msgs, nil
	return &p, nil
}

// decodeMessages decodes a page of at most limit messages. Slack sends no
// more than the limit asked; a server that sends more is not Slack, and a
// body of bare "{}," decoded in full would cost keep about 250 times its
// size in memory, gigabytes for one page within maxBody.
func decodeMessages(raw json.RawMessage, limit int) ([]message, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return nil, err
	} else if tok != json.Delim('[') {
		return nil, errors.New("messages is not a list")
	}
	// conversations.replies may put the thread's parent on top of limit.
	max := limit + 1
	var out []message
	for dec.More() {
		if len(out) == max {
			return nil, fmt.Errorf("more messages than the %d asked for", limit)
		}
		var m message
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
