package mail

import (
	"context"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
)

// dsnSMTP starts a second SMTP server on b's backend that offers DSN (as
// Postfix does), so RCPT TO parameters such as ORCPT are accepted, and
// points b's config at it.
func (b *bundle) dsnSMTP(t *testing.T) {
	t.Helper()
	srv := smtp.NewServer(b.smtp)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.EnableDSN = true
	srv.ErrorLog = quietLogger{}
	ln := listen(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	b.cfg.SMTP = ln.Addr().String()
}

func TestEnvelope(t *testing.T) {
	t.Parallel()

	t.Run("A quoted local part goes into RCPT TO quoted: it cannot end the path and add a parameter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.dsnSMTP(t)
		c := b.connector(t, nil)
		// A grant narrowed to elsewhere.invalid covers this address; sent
		// unquoted, "RCPT TO:<ann@example.org> ORCPT=rfc822;x@elsewhere.invalid>"
		// names ann@example.org as the recipient and the rest as a DSN
		// parameter (Postfix accepts it and delivers to ann).
		to := `"ann@example.org> ORCPT=rfc822;x"@elsewhere.invalid`
		params := map[string]any{"to": to, "subject": "s", "body": "b"}
		if scope := sendScope(params); scope != "elsewhere.invalid" {
			t.Fatalf("scope %q", scope)
		}
		if _, err := c.Do(context.Background(), sendCall("env-1", params)); err != nil {
			t.Fatal(err)
		}
		got := b.smtp.accepted()
		if len(got) != 1 {
			t.Fatalf("%d messages accepted", len(got))
		}
		for _, r := range got[0].to {
			if !strings.HasSuffix(r, "@elsewhere.invalid") {
				t.Errorf("the server took %q as a recipient: outside the scope %q the send was allowed by", r, "elsewhere.invalid")
			}
		}
	})

	t.Run("A local part with a space reaches the server as one address", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		params := map[string]any{"to": `"ann smith"@example.org`, "subject": "s", "body": "b"}
		if _, err := c.Do(context.Background(), sendCall("env-2", params)); err != nil {
			t.Fatal(err)
		}
		if got := b.smtp.accepted(); len(got) != 1 || strings.Join(got[0].to, ",") != "ann smith@example.org" {
			t.Fatalf("accepted %v", got)
		}
	})
}
