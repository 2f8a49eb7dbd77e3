package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"keep/connectors"
)

// eventType marks the metadata of messages keep posted.
const eventType = "keep_mutation"

// postParams are post's params, checked.
type postParams struct {
	channel  string
	text     string
	threadTS string
	blocks   []any
	webhook  bool
}

func parsePost(params map[string]any) (postParams, error) {
	var p postParams
	var err error
	if p.channel, err = connectors.String(params, "channel", false); err != nil {
		return p, err
	}
	if p.text, err = connectors.String(params, "text", false); err != nil {
		return p, err
	}
	if p.threadTS, err = tsParam(params, "thread_ts"); err != nil {
		return p, err
	}
	if p.webhook, err = connectors.Bool(params, "webhook"); err != nil {
		return p, err
	}
	if b, ok := params["blocks"]; ok && b != nil {
		if p.blocks, ok = b.([]any); !ok {
			return p, connectors.Errorf(connectors.Logic, "blocks must be a list of Block Kit blocks, not %T", b)
		}
	}
	if p.text == "" && len(p.blocks) == 0 {
		return p, connectors.Errorf(connectors.Logic, "text (or blocks) is required")
	}
	return p, nil
}

// viaWebhook says whether a post goes to the incoming webhook: when asked, or
// when there is no token to use the Web API with.
func (c *Connector) viaWebhook(p postParams) bool {
	return p.webhook || (c.account == nil && c.webhook != "")
}

// post sends a message: {channel, text, thread_ts, blocks, webhook} →
// {channel, ts}. Through the Web API, channel is Slack's channel ID from the
// answer; through the webhook, it is the channel param and ts is "".
func (c *Connector) post(ctx context.Context, call connectors.Call) (any, error) {
	p, err := parsePost(call.Params)
	if err != nil {
		return nil, err
	}
	if c.viaWebhook(p) {
		return c.postWebhook(ctx, p)
	}
	if p.channel == "" {
		return nil, connectors.Errorf(connectors.Logic, "channel is required")
	}
	body := map[string]any{"channel": p.channel, "text": p.text}
	if p.threadTS != "" {
		body["thread_ts"] = p.threadTS
	}
	if len(p.blocks) > 0 {
		body["blocks"] = p.blocks
	}
	if call.IdempotencyKey != "" {
		body["metadata"] = map[string]any{
			"event_type":    eventType,
			"event_payload": map[string]any{"keep_id": c.postTag(call.IdempotencyKey)},
		}
	}
	var out struct {
		status
		Channel string `json:"channel"`
		TS      string `json:"ts"`
	}
	if err := c.api(ctx, "chat.postMessage", p.channel, nil, body, &out); err != nil {
		return nil, err
	}
	return map[string]any{"channel": out.Channel, "ts": out.TS}, nil
}

// postWebhook posts to the incoming webhook. It answers in plain text ("ok",
// or an error code) with an HTTP status, and leaves nothing to reconcile by:
// no ts, and no metadata.
func (c *Connector) postWebhook(ctx context.Context, p postParams) (any, error) {
	if c.webhook == "" {
		return nil, connectors.Errorf(connectors.Auth, "no incoming webhook is configured")
	}
	// The webhook goes to Slack without an account, so connectors.Transport
	// does not hold it to https; its address is the credential, and it
	// keeps the rule every credential keeps.
	if u, err := url.Parse(c.webhook); err != nil || !strings.EqualFold(u.Scheme, "https") && !connectors.Loopback(u.Hostname()) {
		host := ""
		if u != nil {
			host = u.Host
		}
		return nil, &connectors.Error{Class: connectors.Permission, NotSent: true, Err: fmt.Errorf(
			"refusing to post to the incoming webhook at %s over plain http: its address is a credential anyone on the way could read "+
				"(use its https address; plain http is for this machine only)", host)}
	}
	body := map[string]any{"text": p.text}
	if p.threadTS != "" {
		body["thread_ts"] = p.threadTS
	}
	if len(p.blocks) > 0 {
		body["blocks"] = p.blocks
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "the message is not JSON: %w", err)
	}
	req, err := http.NewRequest(http.MethodPost, c.webhook, bytes.NewReader(data))
	if err != nil {
		return nil, c.errorf(connectors.Internal, nil, "webhook: build the request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	rep, err := c.send(ctx, req, nil, "webhook", true)
	if err != nil {
		return nil, err
	}
	if rep.status == http.StatusNotFound || rep.status == http.StatusGone || rep.status == http.StatusForbidden {
		code := strings.TrimSpace(string(rep.body))
		switch code {
		case "no_service", "invalid_token", "no_active_hooks":
			// The webhook itself was removed or revoked, which a person
			// fixes like a credential.
			return nil, c.errorf(connectors.Auth, nil, "webhook: HTTP %d: %s", rep.status, code)
		case "action_prohibited", "posting_to_general_channel_denied":
			// A 403 for a webhook that works: the workspace restricts
			// posting there, which a new webhook would meet the same way.
			return nil, c.errorf(connectors.Logic, nil,
				"webhook: HTTP %d: %s: the workspace restricts what this webhook may post where; ask a workspace admin, or post to another channel",
				rep.status, code)
		}
	}
	if err := c.checkStatus(rep, "webhook", true); err != nil {
		return nil, err
	}
	return map[string]any{"channel": p.channel, "ts": ""}, nil
}
