package feed

import (
	"encoding/json"
	"strings"

	"github.com/mmcdole/gofeed"
)

// MaxEntries is the most entries a feed may list. gofeed holds every entry
// of a document at once, about a kilobyte each however little the entry
// says, and an entry can be seven bytes (<item/>): ten megabytes of them
// cost 1.7 GB and half a minute. No feed keeps anywhere near this many.
const MaxEntries = 50_000

// entryCount is at least the number of entries body lists, counted without
// parsing it: for a JSON Feed, the elements of "items" (decoded as nothing,
// with the decoder gofeed uses, so both read the same items); for XML,
// every tag named item or entry, any prefix, wherever it stands (a tag in
// a CDATA section or a comment counts too, so the count is never short of
// what the parser will find).
func entryCount(body string) int {
	if gofeed.DetectFeedType(strings.NewReader(body)) == gofeed.FeedTypeJSON {
		var doc struct {
			Items []struct{} `json:"items"`
		}
		if json.Unmarshal([]byte(body), &doc) != nil {
			return 0 // not JSON: gofeed fails on it as well
		}
		return len(doc.Items)
	}
	n := 0
	for i := strings.IndexByte(body, '<'); i >= 0; {
		rest := body[i+1:]
		name := rest[:nameLen(rest)]
		if j := strings.LastIndexByte(name, ':'); j >= 0 {
			name = name[j+1:]
		}
		if strings.EqualFold(name, "item") || strings.EqualFold(name, "entry") {
			n++
		}
		j := strings.IndexByte(rest, '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n
}

// nameLen is the length of the XML name s starts with.
func nameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' || c >= 0x80) {
			return i
		}
	}
	return len(s)
}
