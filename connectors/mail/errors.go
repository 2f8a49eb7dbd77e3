package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"keep/connectors"
)

// The SMTP stage a failure happened in decides its class: the same dropped
// connection is harmless before the final dot and uncertain after it.
type smtpStage int

const (
	stageConnect  smtpStage = iota // dial, TLS, greeting, EHLO
	stageAuth                      // AUTH
	stageEnvelope                  // MAIL, RCPT, DATA (before the body)
	stageBody                      // writing the body; the final dot not yet sent
	stageFinal                     // the final dot sent, waiting for the reply
)

// classifySMTP maps an SMTP client error at a stage onto a connectors.Class
// (DESIGN.md §6 "Outcomes", §7.2).
func classifySMTP(stage smtpStage, err error) connectors.Class {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		switch {
		case stage == stageAuth && se.Code >= 500:
			// 535 bad credentials, 534/538 mechanism or TLS needed, 530:
			// in every case the user has to fix the credentials.
			return connectors.Auth
		case se.Code == 530 || se.Code == 535 || se.EnhancedCode == smtp.EnhancedCode{5, 7, 0} || se.EnhancedCode == smtp.EnhancedCode{5, 7, 8}:
			// "Authentication required" or "bad credentials" at any step.
			return connectors.Auth
		case se.Code >= 400 && se.Code < 500:
			// A 4xx reply is a refusal: nothing was accepted, so even after
			// the final dot it is safe to try again later.
			return connectors.Transient
		case se.Code >= 500:
			// A permanent refusal (bad address, message rejected): the same
			// call will fail the same way.
			return connectors.Logic
		}
	}
	if stage != stageFinal && errors.Is(err, errLongReply) {
		return connectors.Logic
	}
	if stage == stageFinal {
		// No reply to the final dot: the server may have queued the
		// message. Only reconciliation can tell.
		return connectors.Uncertain
	}
	if stage == stageConnect || stage == stageAuth {
		if untrusted(err) {
			return connectors.Permission
		}
		if stage == stageAuth && isSASLRefusal(err) {
			return connectors.Auth
		}
	}
	// Before the final dot the server cannot have accepted the message:
	// any network failure, timeout or protocol hiccup is a clean retry.
	return connectors.Transient
}

// classifyIMAP maps an IMAP error onto a class. Reads never yield Uncertain.
func classifyIMAP(err error) connectors.Class {
	var ie *imap.Error
	if errors.As(err, &ie) {
		switch ie.Code {
		case imap.ResponseCodeAuthenticationFailed, imap.ResponseCodeAuthorizationFailed,
			imap.ResponseCodeExpired, imap.ResponseCodePrivacyRequired, imap.ResponseCodeContactAdmin:
			return connectors.Auth
		case imap.ResponseCodeNonExistent, imap.ResponseCodeNoPerm, imap.ResponseCodeCannot,
			imap.ResponseCodeBadCharset, imap.ResponseCodeClientBug, imap.ResponseCodeParse:
			return connectors.Logic
		}
		return connectors.Transient
	}
	var bad *errV1Response
	var over *overReadError
	if errors.As(err, &bad) || errors.As(err, &over) {
		// the server's answer is what is wrong: asking again gets it again
		return connectors.Logic
	}
	if untrusted(err) {
		return connectors.Permission
	}
	return connectors.Transient
}

// untrusted is true for a certificate the configuration does not trust.
// Retrying will not fix it and no script caused it: it is a configuration
// matter (ca_file) for the user, never the repairer's, so it classifies as
// Permission.
func untrusted(err error) bool {
	var ce *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ie x509.CertificateInvalidError
	return errors.As(err, &ce) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ie)
}

// isSASLRefusal is true for the SASL clients' own refusals (an OAUTHBEARER
// error challenge).
func isSASLRefusal(err error) bool {
	var oe *sasl.OAuthBearerError
	return errors.As(err, &oe)
}

// loginError classifies a failed LOGIN: any refusal of LOGIN is about the
// credentials, with or without an [AUTHENTICATIONFAILED] code (servers
// differ); a dropped connection is not.
func loginError(err error) connectors.Class {
	var ce *connectors.Error
	if errors.As(err, &ce) {
		return ce.Class
	}
	if isSASLRefusal(err) {
		return connectors.Auth
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		if ie.Code == imap.ResponseCodeUnavailable || ie.Code == imap.ResponseCodeServerBug {
			return connectors.Transient
		}
		return connectors.Auth
	}
	return classifyIMAP(err)
}

// fail builds the classified error for a failure, with the password removed
// from its text: servers echo odd things back, and a password must never
// reach a ledger row or a screen. ctx's error, if any, is named so "context
// deadline exceeded" is not hidden behind "use of closed network connection".
func (c *Connector) fail(ctx context.Context, class connectors.Class, what string, err error) *connectors.Error {
	var ce *connectors.Error
	if errors.As(err, &ce) && ce.Class == class {
		// Already classified and redacted (a login inside a session).
		return ce
	}
	msg := err.Error()
	if untrusted(err) {
		msg += " (the server's certificate is not trusted: set ca_file to the CA that signed it)"
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		msg += " (" + ctxErr.Error() + ")"
	}
	// The cause is not kept for errors.Unwrap: its own text may hold what
	// redact removed, and the class already says all the host acts on.
	return &connectors.Error{Class: class, Err: errors.New(c.redact(what + ": " + msg))}
}

// failf builds a classified error from our own text (no cause to unwrap).
func (c *Connector) failf(class connectors.Class, format string, args ...any) *connectors.Error {
	return &connectors.Error{Class: class, Err: errors.New(c.redact(fmt.Sprintf(format, args...)))}
}

// redact removes every secret this connector used, in clear and in the
// base64 forms SASL puts on the wire, from s.
func (c *Connector) redact(s string) string { return c.secrets.redact(s) }
