package connectors

import (
	"encoding/xml"
	"fmt"
	"io"

	"golang.org/x/net/html/charset"
)

// MaxXMLDepth is how deep the elements of an XML answer from a server may
// nest. Feeds, Atom's XHTML content and CalDAV's multistatus stay under
// twenty; past this bound the answer is a hostile or broken server's, not
// a real document.
const MaxXMLDepth = 256

// XMLDepthError is an XML document whose elements nest deeper than Max.
type XMLDepthError struct{ Max int }

func (e *XMLDepthError) Error() string {
	return fmt.Sprintf("XML elements nested more than %d deep", e.Max)
}

// CheckXMLDepth reads the XML document in r and fails with an
// *XMLDepthError at the first element that opens more than limit deep.
//
// encoding/xml's Decoder.Token keeps an entry for every open element, and
// the parsers above it (gofeed, go-webdav) a node or a stack frame: seven
// megabytes of <a> nested a million deep cost them half a gigabyte.
// RawToken keeps no such stack, so the check costs little and stops at
// the bound, before any of that is built.
//
// A document that is not well-formed is left to its parser, which says
// what is wrong with it: the check returns nil at the first syntax error.
// Each start tag counts one level and each end tag takes one off, matched
// or not, down to none; Token closes at least one element per end tag and
// fails on one with nothing open, so it never holds more than the count,
// and a bound on the count bounds it. The check reads as leniently as gofeed does
// (not Strict, any charset it knows), so it is not stopped short by what
// the parser reads on through.
func CheckXMLDepth(r io.Reader, limit int) error {
	return WalkXMLDepth(r, limit, nil)
}

// WalkXMLDepth is CheckXMLDepth that also hands each token it reads, up to
// the bound, to each (when not nil); a token's bytes are valid only until
// each returns. An error from each ends the walk and is returned.
func WalkXMLDepth(r io.Reader, limit int, each func(xml.Token) error) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = charset.NewReaderLabel
	depth := 0
	for {
		tok, err := d.RawToken()
		if err != nil {
			return nil // io.EOF, or a syntax error its parser will report
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth++; depth > limit {
				return &XMLDepthError{Max: limit}
			}
		case xml.EndElement:
			depth = max(depth-1, 0)
		}
		if each != nil {
			if err := each(tok); err != nil {
				return err
			}
		}
	}
}
