package mail

import (
	"context"
	"net/mail"
	"strings"
	"testing"

	"keep/connectors"
)

// TestRecipientsKeepTheirNames: to and cc take "Name <addr>" (the method's
// documentation says so), and the name was dropped: the message went to
// the bare address. It carries the name now, non-ASCII ones encoded
// (RFC 2047), and a name that decodes to a line break or another control
// character is refused before anything is sent, as it would otherwise
// reach the header, and the screens of those who read it.
func TestRecipientsKeepTheirNames(t *testing.T) {
	t.Parallel()

	t.Run("The message carries the names", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		params := map[string]any{
			"to": []any{`"Ann Example" <ann@example.org>`, "bob@example.net"},
			"cc": "Jörg Ülm <jorg@example.com>, \"Smith, Cy\" <cy@example.com>",
		}
		if _, err := c.Do(context.Background(), sendCall("names-1", params)); err != nil {
			t.Fatal(err)
		}
		got := b.smtp.accepted()
		if len(got) != 1 {
			t.Fatalf("%d messages accepted", len(got))
		}
		if strings.Join(got[0].to, ",") != "ann@example.org,bob@example.net,jorg@example.com,cy@example.com" {
			t.Fatalf("envelope to %v", got[0].to)
		}
		raw := string(got[0].data)
		head, _, _ := strings.Cut(raw, "\r\n\r\n")
		for _, r := range head {
			if r > '~' {
				t.Fatalf("a header holds %q unencoded:\n%s", r, head)
			}
		}
		msg, err := mail.ReadMessage(strings.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		for field, want := range map[string][]mail.Address{
			"To": {{Name: "Ann Example", Address: "ann@example.org"}, {Address: "bob@example.net"}},
			"Cc": {{Name: "Jörg Ülm", Address: "jorg@example.com"}, {Name: "Smith, Cy", Address: "cy@example.com"}},
		} {
			list, err := msg.Header.AddressList(field)
			if err != nil || len(list) != len(want) {
				t.Fatalf("%s: %q: %v", field, msg.Header.Get(field), err)
			}
			for i, a := range list {
				if *a != want[i] {
					t.Errorf("%s[%d] = %+v, want %+v", field, i, *a, want[i])
				}
			}
		}
	})

	t.Run("A name with a control character is refused", func(t *testing.T) {
		t.Parallel()
		for _, to := range []string{
			"=?utf-8?q?Ann=0D=0ABcc=3A_eve=40example.net?= <ann@example.org>",
			"=?utf-8?q?Ann=1B=5D0=3Bowned=07?= <ann@example.org>",
		} {
			b := setup(t)
			c := b.connector(t, nil)
			_, err := c.Do(context.Background(), sendCall("names-2", map[string]any{"to": to}))
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "control character") {
				t.Errorf("%q: err = %v, want a logic failure naming the control character", to, err)
			}
			if n := len(b.smtp.accepted()); n != 0 {
				t.Errorf("%q: %d sent", to, n)
			}
		}
	})
}
