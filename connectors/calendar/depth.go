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

// maxICalItems bounds the content lines and parameter values of all the
// iCalendar text of one answer. go-ical builds a Prop, a map and their
// strings for each line, and more for each parameter value: measured,
// some 330 bytes for a line of one short property, 710 for one with a
// parameter, 120 to 210 for each further value, whatever the text's size
// (4 bytes of "X:" and a line break cost 330). So the most go-ical can
// build of one answer is near 100 MB; by bytes alone (MaxBody, 32 MiB)
// it was over 3 GB. A real event is 20 to 40 items, and its object often
// carries a VTIMEZONE of as many again: this still reads some 3,500
// events, a busy calendar's whole year (MaxRange), at once.
const maxICalItems = 300_000

// maxParamCopy bounds what go-ical copies reading parameter values: it
// builds a value a byte at a time, copying it whole for each byte, so a
// value of n bytes costs n²/2 (256 KB cost 33 GB and 20 s; 32 MiB would
// take days, past any timeout, as go-ical never looks at the context).
// Real values are names, time zones and addresses of tens of bytes, a
// few hundred bytes of copying each: the bound is 600,000 such values,
// or one value of 16 KB, and about 0.1 s of work.
const maxParamCopy = 128 << 20

// pastBoundError is an answer past one of the bounds on what go-webdav and
// go-ical build of it: XML elements (connectors.MaxXMLDepth), iCalendar
// components (maxComponentDepth), or how much iCalendar text there is
// (maxICalItems, maxParamCopy).
type pastBoundError struct {
	method, url string
	err         error
}

func (e *pastBoundError) Error() string {
	return fmt.Sprintf("%s %s: the answer has %v", e.method, e.url, e.err)
}

func (e *pastBoundError) Unwrap() error { return e.err }

// componentDepthError is iCalendar text nesting components past max.
type componentDepthError struct{ max int }

func (e *componentDepthError) Error() string {
	return fmt.Sprintf("iCalendar components nested more than %d deep", e.max)
}

// icalSizeError is iCalendar text past maxICalItems or maxParamCopy.
type icalSizeError struct{ msg string }

func (e *icalSizeError) Error() string { return e.msg }

// icalSize is what go-ical would build of all the iCalendar text of one
// answer: go-webdav decodes every object of a multistatus before it
// returns any, so the bounds hold for their sum.
type icalSize struct {
	items  int // content lines and parameter values
	copied int // bytes copied building parameter values
}

// checkBounds makes resp's body check, when it is read, how deep what
// go-webdav and go-ical will parse of it nests, and how much iCalendar
// text it holds: a multistatus (any 207, as
// go-webdav decodes one whatever its Content-Type says, or any XML) and the
// iCalendar text of each of its elements, or an iCalendar object. An answer
// nobody reads, a PUT's or a DELETE's, is never checked, so a write is
// never called failed for what came back with its 2xx.
func checkBounds(req *http.Request, resp *http.Response, maxBody int64) {
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
			return &pastBoundError{method: req.Method, url: connectors.RedactURL(req.URL), err: err}
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
	size := &icalSize{}
	return connectors.WalkXMLDepth(bytes.NewReader(b), connectors.MaxXMLDepth, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			open = append(open, componentDepth{size: size})
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
	d := componentDepth{size: &icalSize{}}
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
// It also adds the lines and parameter values go-ical reads to size.
type componentDepth struct {
	depth int
	done  bool
	size  *icalSize

	name   []byte // the line's name so far, up to maxName bytes
	at     part   // the part of the line the next byte is in
	long   bool   // the name is longer than maxName
	some   bool   // the line is not empty
	values int    // the line's parameter values so far
	value  int    // the length of the parameter value being read
	copied int    // what go-ical copies for the line's parameter values
	cr     bool   // a \r held back, dropped if \n follows
	eol    bool   // a line ended; the next byte says whether it goes on
}

// part is where a byte falls in a content line, as go-ical's lineDecoder
// reads parameters: a parameter's name runs to the next =, whatever it
// holds; a value is quoted or runs to ; , or :, and a , starts another.
type part uint8

const (
	inName     part = iota
	inParam         // a parameter's name
	valueStart      // after = or ,
	inQuoted        // a quoted value
	afterQuote      // the quote that closed a value
	inUnquoted      // an unquoted value
	inValue         // the property's value, or a line go-ical fails on
)

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
	switch d.at {
	case inName:
		switch {
		case c == ';':
			d.at = inParam
		case c == ':':
			d.at = inValue
		case len(d.name) < maxName:
			d.name = append(d.name, c)
		default:
			d.long = true
		}
	case inParam:
		if c == '=' {
			d.startValue()
		}
	case valueStart:
		if c == '"' {
			d.at = inQuoted
			return
		}
		d.at = inUnquoted
		d.unquoted(c)
	case inQuoted:
		if c == '"' {
			d.at = afterQuote
			return
		}
		d.grow()
	case afterQuote:
		switch c {
		case ',':
			d.startValue()
		case ';':
			d.at = inParam
		default: // : begins the value; anything else makes go-ical fail
			d.at = inValue
		}
	case inUnquoted:
		d.unquoted(c)
	}
}

func (d *componentDepth) unquoted(c byte) {
	switch c {
	case ',':
		d.startValue()
	case ';':
		d.at = inParam
	case ':', '"': // the value begins, or go-ical fails
		d.at = inValue
	default:
		d.grow()
	}
}

func (d *componentDepth) startValue() {
	d.at, d.values, d.value = valueStart, d.values+1, 0
}

// grow is one more byte of a parameter value, which go-ical adds by
// copying the value so far into a string one byte longer.
func (d *componentDepth) grow() {
	d.value++
	d.copied += d.value
}

// line counts the line just ended.
func (d *componentDepth) line() error {
	name, named, long, some, values, copied := d.name, d.at != inName, d.long, d.some, d.values, d.copied
	d.name, d.at, d.long, d.some, d.values, d.value, d.copied = d.name[:0], inName, false, false, 0, 0, 0
	if !some {
		return nil
	}
	if !named || len(name) == 0 {
		d.done = true
		return nil
	}
	if d.size.items += 1 + values; d.size.items > maxICalItems {
		return &icalSizeError{fmt.Sprintf("more than %d iCalendar lines and parameter values", maxICalItems)}
	}
	if d.size.copied += copied; d.size.copied > maxParamCopy {
		return &icalSizeError{fmt.Sprintf("iCalendar parameter values too long: go-ical would copy more than %d MiB reading them", maxParamCopy>>20)}
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
