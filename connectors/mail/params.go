package mail

import (
	"fmt"
	"math"
	"net/mail"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// recipients are the parsed to, cc and bcc of a send, as bare addresses,
// and to and cc as given, names included, for the message's header.
type recipients struct {
	to, cc, bcc      []string
	toNamed, ccNamed []*mail.Address
}

func (r recipients) all() []string {
	return append(append(append([]string(nil), r.to...), r.cc...), r.bcc...)
}

// domains is every recipient domain, lower-case, sorted, unique.
func (r recipients) domains() []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range r.all() {
		d := strings.ToLower(a[strings.LastIndexByte(a, '@')+1:])
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

func parseRecipients(params map[string]any) (recipients, error) {
	var r recipients
	var err error
	if r.toNamed, err = addressList(params, "to"); err != nil {
		return r, err
	}
	if r.ccNamed, err = addressList(params, "cc"); err != nil {
		return r, err
	}
	bcc, err := addressList(params, "bcc")
	if err != nil {
		return r, err
	}
	r.to, r.cc, r.bcc = bare(r.toNamed), bare(r.ccNamed), bare(bcc)
	return r, nil
}

func bare(list []*mail.Address) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.Address)
	}
	return out
}

// addressList reads params[key] as a string of comma-separated addresses or
// an array of them, each either bare or "Name <addr>".
func addressList(params map[string]any, key string) ([]*mail.Address, error) {
	var parts []string
	switch v := params[key].(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		parts = []string{v}
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d] is %T, not a string", key, i, e)
			}
			parts = append(parts, s)
		}
	case []string:
		parts = v
	default:
		return nil, fmt.Errorf("%s is %T, not a string or an array of strings", key, v)
	}
	var out []*mail.Address
	for _, p := range parts {
		list, err := mail.ParseAddressList(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an address list: %v", key, p, err)
		}
		for _, a := range list {
			// A name is decoded (RFC 2047) by now: an encoded line break
			// is one here, and would be one in the header once the name
			// was written out again by a less careful encoder; any other
			// control character would reach the terminals of those who
			// read the message.
			if strings.IndexFunc(a.Name, unicode.IsControl) >= 0 {
				return nil, fmt.Errorf("%s: the name of %s holds a control character", key, a.Address)
			}
		}
		out = append(out, list...)
	}
	return out, nil
}

// stringParam reads an optional string parameter.
func stringParam(params map[string]any, key string) (string, error) {
	switch v := params[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s is %T, not a string", key, v)
	}
}

// uintParam reads an optional non-negative integer given as a number or a
// numeric string (cursors round-trip through JSON and scripts as either).
func uintParam(params map[string]any, key string) (uint64, bool, error) {
	var f float64
	switch v := params[key].(type) {
	case nil:
		return 0, false, nil
	case float64:
		f = v
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint32:
		f = float64(v)
	case string:
		if strings.TrimSpace(v) == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil || n > math.MaxUint32 {
			return 0, false, fmt.Errorf("%s %q is not a non-negative integer", key, v)
		}
		return n, true, nil
	default:
		return 0, false, fmt.Errorf("%s is %T, not a number", key, v)
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxUint32 {
		return 0, false, fmt.Errorf("%s %v is not a non-negative integer", key, f)
	}
	return uint64(f), true, nil
}

// boolParam reads an optional boolean.
func boolParam(params map[string]any, key string) (bool, error) {
	switch v := params[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s is %T, not a boolean", key, v)
	}
}

// dateParam reads an optional date, "2006-01-02" or RFC 3339.
func dateParam(params map[string]any, key string) (time.Time, error) {
	s, err := stringParam(params, key)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a date (YYYY-MM-DD or RFC 3339)", key, s)
	}
	return t, nil
}
