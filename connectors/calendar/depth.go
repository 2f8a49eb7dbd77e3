package calendar

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"keep/connectors"
)

// maxComponentDepth is how deep the components of an iCalendar object may
// nest. RFC 5545's nest three deep (VCALENDAR, VEVENT, VALARM); go-ical
// reads each level in a call of its own, and 32 MB of BEGIN lines nested
// one in the other overflow the goroutine's stack, which ends the process.
const maxComponentDepth = 64

// tooDeepError is an answer nested past one of the bounds: XML elements
// (connectors.MaxXMLDepth) or iCalendar components (maxComponentDepth).
type tooDeepError struct {
	method, url string
	err         error
}

func (e *tooDeepError) Error() string {
	return fmt.Sprintf("%s %s: the answer has %v", e.method, e.url, e.err)
}

func (e *tooDeepError) Unwrap() error { return e.err }

// componentDepthError is iCalendar text nesting components past max.
type componentDepthError struct{ max int }

func (e *componentDepthError) Error() string {
	return fmt.Sprintf("iCalendar components nested more than %d deep", e.max)
}

// checkDepth makes resp's body check, when it is read, how deep what
// go-webdav and go-ical will parse of it nests: a multistatus (any 207, as
// go-webdav decodes one whatever its Content-Type says, or any XML) and the
// iCalendar text of each of its elements, or an iCalendar object. An answer
// nobody reads, a PUT's or a DELETE's, is never checked, so a write is
// never called failed for what came back with its 2xx.
func checkDepth(req *http.Request, resp *http.Response, maxBody int64) {
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var check func([]byte) error
	switch {
	case resp.StatusCode == http.StatusMultiStatus || media == "application/xml" || media == "text/xml" || strings.HasSuffix(media, "+xml"):
		check = checkXML
	case strings.EqualFold(media, "text/calendar"):
		check = checkICal
	default:
		return
	}
	size := int64(0)
	if resp.ContentLength > 0 && resp.ContentLength <= maxBody {
		size = resp.ContentLength
	}
	resp.Body = &checkedBody{ReadCloser: resp.Body, size: size, check: func(b []byte) error {
		if err := check(b); err != nil {
			return &tooDeepError{method: req.Method, url: connectors.RedactURL(req.URL), err: err}
		}
		return nil
	}}
}

// checkedBody reads the whole answer (already capped at MaxBody) at its
// first Read, and hands it on only once check has passed it.
type checkedBody struct {
	io.ReadCloser
	size  int64 // the answer's length, when the server said it
	check func([]byte) error
	r     *bytes.Reader
	err   error
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		data, err := readAll(b.ReadCloser, b.size)
		if err == nil {
			err = b.check(data)
		}
		if b.err = err; err == nil {
			b.r = bytes.NewReader(data)
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

// readAll is io.ReadAll into a buffer of size bytes, when the answer
// said its length: not grown, and copied, a dozen times over.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// checkXML bounds the depth of the elements of an XML answer, and of the
// iCalendar components in each element's text: go-webdav hands go-ical
// an element's text (calendar-data) joined across any child elements, so
// each open element has a count of its own.
func checkXML(b []byte) error {
	var open []componentDepth // at most MaxXMLDepth+1
	return connectors.WalkXMLDepth(bytes.NewReader(b), connectors.MaxXMLDepth, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			open = append(open, componentDepth{})
		case xml.EndElement:
			if len(open) == 0 {
				return nil
			}
			last := &open[len(open)-1]
			err := last.end()
			open = open[:len(open)-1]
			return err
		case xml.CharData:
			if len(open) > 0 {
				return open[len(open)-1].write(t)
			}
		}
		return nil
	})
}

func checkICal(b []byte) error {
	var d componentDepth
	if err := d.write(b); err != nil {
		return err
	}
	return d.end()
}

// maxName is past the longest content-line name that upper-cases to BEGIN
// (five runes of at most four bytes).
const maxName = 32

// componentDepth counts the BEGIN and END lines of iCalendar text, given
// in pieces, as go-ical's Decoder reads them: lines end at \n (a \r
// before it dropped), a line starting with a space or a tab goes on the
// one before without that byte, empty lines are skipped, and a line's
// name is what comes before its first ; or :, upper-cased. go-ical reads
// one component, so the count stops where it ends, at a first line that
// does not begin one, or at a line with no name, where go-ical fails.
type componentDepth struct {
	depth int
	done  bool

	name  []byte // the line's name so far, up to maxName bytes
	named bool   // the ; or : after the name came
	long  bool   // the name is longer than maxName
	some  bool   // the line is not empty
	cr    bool   // a \r held back, dropped if \n follows
	eol   bool   // a line ended; the next byte says whether it goes on
}

func (d *componentDepth) write(p []byte) error {
	for _, c := range p {
		if d.done {
			return nil
		}
		if d.eol {
			d.eol = false
			if c == ' ' || c == '\t' {
				continue
			}
			if err := d.line(); err != nil || d.done {
				return err
			}
		}
		if d.cr {
			d.cr = false
			if c == '\n' {
				d.eol = true
				continue
			}
			d.add('\r')
		}
		switch c {
		case '\r':
			d.cr = true
		case '\n':
			d.eol = true
		default:
			d.add(c)
		}
	}
	return nil
}

// end is the end of the text: its last line counts whether or not a line
// break closes it.
func (d *componentDepth) end() error {
	if d.done {
		return nil
	}
	if d.cr {
		d.cr = false
		d.add('\r')
	}
	return d.line()
}

func (d *componentDepth) add(c byte) {
	d.some = true
	switch {
	case d.named:
	case c == ';' || c == ':':
		d.named = true
	case len(d.name) < maxName:
		d.name = append(d.name, c)
	default:
		d.long = true
	}
}

// line counts the line just ended.
func (d *componentDepth) line() error {
	name, named, long, some := d.name, d.named, d.long, d.some
	d.name, d.named, d.long, d.some = d.name[:0], false, false, false
	if !some {
		return nil
	}
	if !named || len(name) == 0 {
		d.done = true
		return nil
	}
	upper := ""
	if !long {
		upper = strings.ToUpper(string(name))
	}
	switch {
	case upper == "BEGIN":
		if d.depth++; d.depth > maxComponentDepth {
			return &componentDepthError{max: maxComponentDepth}
		}
	case d.depth == 0:
		d.done = true
	case upper == "END":
		d.depth--
		d.done = d.depth == 0
	}
	return nil
}
