package mail

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"

	"keep/connectors"
)

// selfSigned returns a server certificate for 127.0.0.1 and a client
// configuration that trusts it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "keep test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

// tlsListen serves srv on a new loopback listener wrapped in TLS (implicit
// TLS, as on ports 993 and 465).
func tlsListen(t *testing.T, serve func(net.Listener) error, cfg *tls.Config) string {
	t.Helper()
	ln := tls.NewListener(listen(t), cfg)
	go func() { _ = serve(ln) }()
	return ln.Addr().String()
}

func TestTLS(t *testing.T) {
	t.Parallel()

	t.Run("Implicit TLS reads and sends with a trusted certificate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		serverTLS, clientTLS := selfSigned(t)
		b.seed(t, "INBOX", "ann@example.org", "Over TLS", "secret stuff")
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS = TLSImplicit
			cfg.TLSConfig = clientTLS
			cfg.IMAP = tlsListen(t, b.imapSrv.Serve, serverTLS)
			cfg.SMTP = tlsListen(t, b.smtpSrv.Serve, serverTLS)
		})
		res := do(t, c, "search", nil)
		if msgs := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["snippet"] != "secret stuff" {
			t.Fatalf("search: %v", res)
		}
		call := sendCall("tls-1", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		if _, err := c.Do(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("STARTTLS sends with a trusted certificate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		serverTLS, clientTLS := selfSigned(t)
		b.smtpSrv.TLSConfig = serverTLS
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS = TLSStartTLS
			cfg.TLSConfig = clientTLS
		})
		if _, err := c.Do(context.Background(), sendCall("st-1", map[string]any{"to": "ann@example.org"})); err != nil {
			t.Fatal(err)
		}
		if n := len(b.smtp.accepted()); n != 1 {
			t.Fatalf("%d accepted", n)
		}
	})

	t.Run("STARTTLS reads with a trusted certificate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		serverTLS, clientTLS := selfSigned(t)
		b.seed(t, "INBOX", "ann@example.org", "Upgraded", "x")
		// A second server on the same mailboxes that refuses to log in
		// before STARTTLS, as a real one does.
		srv := imapserver.New(&imapserver.Options{
			NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
				return b.imapMem.NewSession(), nil, nil
			},
			Caps:      imap.CapSet{imap.CapIMAP4rev1: {}},
			TLSConfig: serverTLS,
			Logger:    quietLogger{},
		})
		ln := listen(t)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS = TLSStartTLS
			cfg.TLSConfig = clientTLS
			cfg.IMAP = ln.Addr().String()
		})
		res := do(t, c, "search", nil)
		if msgs := res["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("search: %v", res)
		}
	})

	t.Run("An untrusted certificate is a permission failure for the user, not a retry or a repair", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		serverTLS, _ := selfSigned(t)
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS = TLSImplicit
			cfg.IMAP = tlsListen(t, b.imapSrv.Serve, serverTLS)
			cfg.SMTP = tlsListen(t, b.smtpSrv.Serve, serverTLS)
		})
		_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
		if connectors.ClassOf(err) != connectors.Permission || !strings.Contains(err.Error(), "ca_file") {
			t.Errorf("imap: %v", err)
		}
		_, err = c.Do(context.Background(), sendCall("k", map[string]any{"to": "a@example.org"}))
		if connectors.ClassOf(err) != connectors.Permission || !strings.Contains(err.Error(), "ca_file") {
			t.Errorf("smtp: %v", err)
		}
		if n := len(b.smtp.accepted()); n != 0 {
			t.Errorf("%d sent", n)
		}
	})

	t.Run("ca_file makes a self-signed server trusted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		serverTLS, _ := selfSigned(t)
		caFile := filepath.Join(t.TempDir(), "ca.pem")
		der := serverTLS.Certificates[0].Certificate[0]
		if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		b.seed(t, "INBOX", "ann@example.org", "Trusted", "x")
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS = TLSImplicit
			cfg.CAFile = caFile
			cfg.IMAP = tlsListen(t, b.imapSrv.Serve, serverTLS)
			cfg.SMTP = tlsListen(t, b.smtpSrv.Serve, serverTLS)
		})
		if res := do(t, c, "search", nil); len(res["messages"].([]any)) != 1 {
			t.Fatalf("search: %v", res)
		}
		if _, err := c.Do(context.Background(), sendCall("ca-1", map[string]any{"to": "a@example.org"})); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("A ca_file without a certificate is refused at start", func(t *testing.T) {
		t.Parallel()
		bad := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(bad, []byte("not pem"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", CAFile: bad}); err == nil || !strings.Contains(err.Error(), "ca_file") {
			t.Fatalf("got %v", err)
		}
	})
}
