package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"keep/connectors"
)

// maxBody caps what we read of an answer: history pages are well under this.
const maxBody = 8 << 20

// reply is an HTTP answer, read in full.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send performs one request within the connector's timeout through
// connectors.Transport, with a's token (nil: as it is), and classifies failures that leave no answer
// (connectors.Classify): for a mutation, the line between Transient and
// Uncertain is whether the request was fully written; before that Slack
// cannot have acted on it, after it a reset or a timeout says nothing
// about whether it did.
func (c *Connector) send(ctx context.Context, req *http.Request, a connectors.Account, what string, mutation bool) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	t := connectors.Transport{Client: c.client, Account: a}
	resp, sent, err := t.Do(req.WithContext(ctx))
	if err != nil {
		// *url.Error quotes the URL, which for a webhook is the credential.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		x := connectors.Exchange{Err: err, Sent: sent, Mutation: mutation}
		if mutation && sent {
			return nil, connectors.Failure(x, 0, c.redactedf(err, "%s: the request was sent but no answer came, so it may have been posted: %v", what, err))
		}
		return nil, connectors.Failure(x, 0, c.redactedf(err, "%s: %v", what, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		x := connectors.Exchange{Status: resp.StatusCode, Err: err, Sent: true, Mutation: mutation}
		if mutation {
			return nil, connectors.Failure(x, 0, c.redactedf(err, "%s: HTTP %d, and the answer broke off: %v", what, resp.StatusCode, err))
		}
		return nil, connectors.Failure(x, 0, c.redactedf(err, "%s: reading the answer: %v", what, err))
	}
	return &reply{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// status is the envelope of every Web API answer.
type status struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// Needed and Provided come with missing_scope: the scope the method
	// wants and those the token has.
	Needed   string `json:"needed"`
	Provided string `json:"provided"`
}

// api calls a Web API method and decodes its answer into out (which should
// embed status). Reads send query params with GET; mutations a JSON body.
// channel is the one the call is about, for the person reading a refusal.
func (c *Connector) api(ctx context.Context, method, channel string, query url.Values, body any, out any) error {
	if c.account == nil {
		return connectors.Errorf(connectors.Auth, "no Slack token is configured (connectors.slack.token_env)")
	}
	mutation := body != nil
	u := c.apiBase + "/" + method
	var req *http.Request
	var err error
	if mutation {
		data, merr := json.Marshal(body)
		if merr != nil {
			return connectors.Errorf(connectors.Logic, "%s: the message is not JSON: %w", method, merr)
		}
		req, err = http.NewRequest(http.MethodPost, u, bytes.NewReader(data))
		if req != nil {
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
		}
	} else {
		req, err = http.NewRequest(http.MethodGet, u+"?"+query.Encode(), nil)
	}
	if err != nil {
		return connectors.Errorf(connectors.Internal, "%s: build the request: %w", method, err)
	}
	rep, err := c.send(ctx, req, c.account, method, mutation)
	if err != nil {
		return err
	}
	if err := c.checkStatus(rep, method, mutation); err != nil {
		return err
	}
	if err := json.Unmarshal(rep.body, out); err != nil {
		return c.noSense(method, mutation, err)
	}
	var st struct {
		status
		// Every answer of Slack's says ok; one that doesn't (a proxy's
		// "{}" or "null") says nothing of whether a post went through.
		HasOK *bool `json:"ok"`
	}
	if err := json.Unmarshal(rep.body, &st); err != nil {
		return c.noSense(method, mutation, err)
	}
	if st.HasOK == nil {
		return c.noSense(method, mutation, errors.New(`no "ok"`))
	}
	st.OK = *st.HasOK
	if !st.OK {
		if st.Error != "" && !slackCodeRE.MatchString(st.Error) {
			st.Error = notSlacks
		}
		class := codeClass(st.Error, mutation)
		msg := fmt.Sprintf("%s: Slack says %s", method, orUnknown(st.Error))
		advice := codeAdvice(st.Error, channel)
		if st.Error == "missing_scope" {
			advice = scopeAdvice(st.Needed, st.Provided)
		}
		if advice != "" {
			msg += ": " + advice
		}
		e := c.errorf(class, nil, "%s", msg)
		e.Err.(*redacted).code = st.Error
		if class == connectors.Transient {
			e.RetryAfter = retryAfter(rep.header)
		}
		return e
	}
	return nil
}

// noSense is an HTTP 2xx whose body isn't Slack's JSON: a proxy page, or a
// body cut short. A mutation may have gone through behind it.
func (c *Connector) noSense(what string, mutation bool, err error) error {
	class := connectors.Transient
	if mutation {
		class = connectors.Uncertain
	}
	return c.errorf(class, err, "%s: the answer is not Slack's JSON: %v", what, err)
}

// slackCodeRE is what Slack's error codes look like (invalid_auth,
// msg_blocks_too_long). The code is the server's to fill and is quoted into
// the error only then: not megabytes, a terminal's escape sequence, or
// words that tell the person what to run.
var slackCodeRE = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// notSlacks stands for a code slackCodeRE refuses; it matches no case of
// codeClass, so the refusal is Logic like any other code.
const notSlacks = "?"

func orUnknown(code string) string {
	switch code {
	case "":
		return "not ok, without saying why"
	case notSlacks:
		return "not ok, with an error code that is not one of Slack's"
	}
	return code
}

// checkStatus classifies a non-2xx HTTP status (connectors.Classify: the
// token or the webhook is keep's credential, so a 401 or 403 is auth).
func (c *Connector) checkStatus(rep *reply, what string, mutation bool) error {
	x := connectors.Exchange{Status: rep.status, Sent: true, Mutation: mutation, Credential: true}
	body := rep.body
	if rep.status < 200 || rep.status > 299 {
		// Redacted before brief cuts it: cut first, an echoed token's
		// start would no longer match the token and would stay.
		body = []byte(c.redact(string(body)))
	}
	if e := connectors.Failure(x, retryAfter(rep.header), c.redactedf(nil, "%s: HTTP %d%s", what, rep.status, brief(body))); e != nil {
		return e
	}
	return nil
}

// brief quotes the start of an error body, for the person reading the error.
func brief(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return ""
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return ": " + s
}

// errorf builds a classified error whose message has the credentials taken
// out, whatever the message quotes (a server echoing a header, say). The
// cause is kept for errors.Is but not shown.
func (c *Connector) errorf(class connectors.Class, cause error, format string, args ...any) *connectors.Error {
	return &connectors.Error{Class: class, Err: c.redactedf(cause, format, args...)}
}

// redactedf is errorf's message, for connectors.Failure to classify.
func (c *Connector) redactedf(cause error, format string, args ...any) *redacted {
	return &redacted{msg: c.redact(fmt.Sprintf(format, args...)), cause: cause}
}

func (c *Connector) redact(s string) string {
	var token string
	if c.account != nil {
		// a configured account's Secret reads the config or the
		// environment: nothing that waits
		token, _ = c.account.Secret(context.Background())
	}
	for _, secret := range []string{token, c.webhook} {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	if c.webhook != "" {
		// The webhook's path alone is enough to post: hide it on its own too.
		if u, err := url.Parse(c.webhook); err == nil && len(u.Path) > 1 {
			s = strings.ReplaceAll(s, u.Path, "/[redacted]")
		}
	}
	return s
}

type redacted struct {
	msg   string
	cause error
	code  string // Slack's ok:false error code, if that is what this is
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.cause }
