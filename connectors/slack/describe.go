package slack

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// What people see of a post: the grant scope, the approval and ledger line,
// and the manual check for an outcome nobody could determine.

// Text is cut in previews so the line stays one line on a screen; the
// approval pane also shows the full params.
const (
	previewRunes = 80
	checkRunes   = 40
)

// scopePost is the channel without its "#", so "#finance" and "finance" are
// one grant. A webhook post with no channel is scoped to "webhook": the
// webhook decides where it goes.
func scopePost(params map[string]any) string {
	ch, _ := params["channel"].(string)
	if ch = strings.TrimPrefix(ch, "#"); ch != "" {
		return ch
	}
	if hook, _ := params["webhook"].(bool); hook {
		return "webhook"
	}
	return ""
}

func previewPost(params map[string]any) string {
	s := "post to " + where(params)
	if hook, _ := params["webhook"].(bool); hook {
		s += " via the incoming webhook"
	}
	return s + ": " + what(params, previewRunes)
}

func checkPost(params map[string]any) string {
	return "look in " + where(params) + " for " + what(params, checkRunes)
}

// channelID matches Slack's conversation IDs, which are shown as they are;
// names get their "#".
var channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{6,}$`)

func where(params map[string]any) string {
	ch, _ := params["channel"].(string)
	switch {
	case ch == "":
		ch = "the webhook's channel"
	case !strings.HasPrefix(ch, "#") && !channelID.MatchString(ch):
		ch = "#" + ch
	}
	if ts, ok := params["thread_ts"]; ok && ts != nil && ts != "" {
		return fmt.Sprintf("the thread %v in %s", ts, ch)
	}
	return ch
}

func what(params map[string]any, max int) string {
	text, _ := params["text"].(string)
	if text == "" {
		if blocks, ok := params["blocks"].([]any); ok {
			return fmt.Sprintf("a message of %d blocks", len(blocks))
		}
		return `""`
	}
	if r := []rune(text); len(r) > max {
		text = string(r[:max]) + "…"
	}
	return strconv.Quote(text)
}
