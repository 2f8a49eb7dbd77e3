package slack

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	long := "3 invoices arrived today: from Alice, Bob and Carol. Totals are in the sheet, please review before Friday."
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"A preview names the channel and cuts long text", previewPost(params("channel", "#finance", "text", long)),
			`post to #finance: "3 invoices arrived today: from Alice, Bob and Carol. Totals are in the sheet, pl…"`},
		{"A bare channel name gets its #", previewPost(params("channel", "finance", "text", "hi")), `post to #finance: "hi"`},
		{"A channel ID is shown as it is", previewPost(params("channel", "C0FINANCE1", "text", "hi")), `post to C0FINANCE1: "hi"`},
		{"A thread and a webhook are said", previewPost(params("channel", "finance", "text", "a\nb", "thread_ts", "1.2", "webhook", true)),
			`post to the thread 1.2 in #finance via the incoming webhook: "a\nb"`},
		{"Blocks without text are counted", previewPost(params("channel", "finance", "blocks", []any{1.0, 2.0})), `post to #finance: a message of 2 blocks`},
		{"A check says where to look, shorter", checkPost(params("channel", "#finance", "text", long)), `look in #finance for "3 invoices arrived today: from Alice, Bo…"`},
		{"A webhook post without a channel is looked for in its channel", checkPost(params("text", "hi", "webhook", true)), `look in the webhook's channel for "hi"`},
		{"The scope is the channel without #", scopePost(params("channel", "#finance")), "finance"},
		{"A channel ID scopes as itself", scopePost(params("channel", "C0FINANCE1")), "C0FINANCE1"},
		{"A webhook post without a channel scopes to the webhook", scopePost(params("webhook", true)), "webhook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Fatalf("got  %s\nwant %s", tt.got, tt.want)
			}
			if strings.Contains(tt.got, "\n") {
				t.Fatal("not one line")
			}
		})
	}
}
