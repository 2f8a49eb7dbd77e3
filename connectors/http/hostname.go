package http

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// canonicalHost is a host name spelled the one way keep compares it: lower
// case, without the one trailing dot of a fully qualified name, an
// internationalised name in ASCII (punycode) and an IP address in its
// usual form. An allow_hosts or hosts entry and a request's host both go
// through it, so an entry matches every spelling of the host a person
// means and no spelling of another. The IDNA profile is the one net/http
// dials a non-ASCII name with (idna.Lookup), so the name compared is the
// name the request goes to.
func canonicalHost(h string) (string, error) {
	if !ascii(h) {
		a, err := idna.Lookup.ToASCII(h) // maps case and width too: ＥＸＡＭＰＬＥ．com is example.com
		if err != nil {
			return "", err
		}
		h = a
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return "", errors.New("no host name")
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	if strings.ContainsAny(h, ":%[]") {
		return "", errors.New("not a host name") // an IPv6 address with a zone, or no address at all
	}
	return h, nil
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// canonicalPort is a port number as digits without leading zeros; ""
// stays "".
func canonicalPort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "+") {
		return "", errors.New("the port must be a number from 1 to 65535")
	}
	return strconv.Itoa(n), nil
}
