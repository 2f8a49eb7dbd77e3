package feed

import (
	"mime"
	"regexp"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// decoded is body in UTF-8 when it is not already and its Content-Type
// names the character set it is in. The header outranks the XML
// declaration (RFC 7303 §3.2), and a feed that names its charset only
// there is otherwise read as UTF-8 and refused as not a feed. The
// declaration is made to say UTF-8, so gofeed does not decode it again.
// A body already valid UTF-8 is left to gofeed and its declaration.
func decoded(body, contentType string) string {
	if utf8.ValidString(body) {
		return body
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["charset"] == "" {
		return body
	}
	enc, name := charset.Lookup(params["charset"])
	if enc == nil || name == "utf-8" {
		return body
	}
	out, err := enc.NewDecoder().String(body)
	if err != nil {
		return body
	}
	return declaredEncoding.ReplaceAllString(out, "${1}${2}UTF-8${2}")
}

// declaredEncoding is the encoding in an XML declaration that opens a
// document.
var declaredEncoding = regexp.MustCompile(`^(\s*<\?xml[^>]*?\sencoding\s*=\s*)(["'])[^"']*["']`)
