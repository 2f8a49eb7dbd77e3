package sheets

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

var utf8BOM = []byte("\xef\xbb\xbf")

// table is one sheet as read from its file: the header line and the records
// under it, each kept exactly as many fields long as it was so a rewrite
// changes nothing it wasn't asked to.
type table struct {
	exists  bool
	stamp   stamp
	mode    fs.FileMode
	bom     bool // spreadsheet programs write one; keep it
	crlf    bool // and their line endings
	header  []string
	records [][]string
	keepCol int // index of KeepIDColumn in header, or -1
	// escapes: a script's values are written as text, not formulas
	// (formula.go): a CSV file, which a spreadsheet program evaluates. A
	// Google sheet is written RAW instead. header and records hold the
	// cells as written; in and out are the way between them and values.
	escapes bool
}

// stamp identifies a version of a file, to notice another program writing
// it between our read and our rename.
type stamp struct {
	exists  bool
	size    int64
	modTime time.Time
}

func stampOf(fi fs.FileInfo) stamp {
	if fi == nil {
		return stamp{}
	}
	return stamp{exists: true, size: fi.Size(), modTime: fi.ModTime()}
}

// load reads a sheet: a CSV file, or a tab of a Google spreadsheet.
func (c *Connector) load(ctx context.Context, loc location) (*table, error) {
	if loc.google != nil {
		return c.loadGoogle(ctx, loc)
	}
	return c.loadFile(loc)
}

// loadFile reads and parses the sheet file. A missing file is a table with
// exists false, not an error: appendRow creates it, the others refuse.
func (c *Connector) loadFile(loc location) (*table, error) {
	t := &table{keepCol: -1, mode: 0o644, escapes: true}
	// O_NONBLOCK: a FIFO named as a sheet would otherwise hold the open
	// until a writer came, for ever; the check below then refuses it.
	var f *os.File
	dir, err := connectors.OpenBeneath(loc.root, filepath.Dir(loc.file), false)
	if err == nil {
		f, err = connectors.OpenAt(dir, filepath.Base(loc.file), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		dir.Close()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, classifyIO("open "+loc.label, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, classifyIO("stat "+loc.label, err)
	}
	if fi.IsDir() {
		return nil, connectors.Errorf(connectors.Logic, "%s is a directory, not a sheet", loc.label)
	}
	if !fi.Mode().IsRegular() {
		return nil, connectors.Errorf(connectors.Logic, "%s is not a regular file, so not a sheet", loc.label)
	}
	if fi.Size() > c.maxSize {
		return nil, c.errTooBig(loc, fi.Size())
	}
	// Read one byte past the limit: the file may have grown since Stat.
	data, err := io.ReadAll(io.LimitReader(f, c.maxSize+1))
	if err != nil {
		return nil, classifyIO("read "+loc.label, err)
	}
	if int64(len(data)) > c.maxSize {
		return nil, c.errTooBig(loc, int64(len(data)))
	}
	t.exists, t.stamp, t.mode = true, stampOf(fi), fi.Mode().Perm()
	if err := t.parse(data); err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s: %w", loc.label, err)
	}
	return t, nil
}

func (c *Connector) errTooBig(loc location, size int64) error {
	return connectors.Errorf(connectors.Logic, "%s is too big (%d bytes; the limit is %d)", loc.label, size, c.maxSize)
}

func (t *table) parse(data []byte) error {
	t.bom = bytes.HasPrefix(data, utf8BOM)
	data = bytes.TrimPrefix(data, utf8BOM)
	data, crlf, mark := markQuotedCRLF(data)
	t.crlf = crlf
	r := csv.NewReader(bytes.NewReader(data))
	// Hand-edited sheets are often ragged; short rows read as empty cells.
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return fmt.Errorf("malformed CSV: %w", err)
	}
	if mark != "" {
		for _, rec := range records {
			for i, f := range rec {
				rec[i] = strings.ReplaceAll(f, mark, "\r\n")
			}
		}
	}
	return t.setRecords(records)
}

// markQuotedCRLF tells whether data's records end in CRLF (by the first
// line end outside quotes: a cell's own line break says nothing of the
// file's), and replaces each CRLF inside a quoted cell by mark, a rune
// data does not hold, for the caller to put back after encoding/csv has
// read it: the reader turns every CRLF into LF, a cell's own included,
// and a cell must read as it was written. mark is "" when there is none.
//
// A quote opens or closes a quoted cell, or, doubled, stands for itself
// inside one, where it closes and opens again: so counting every quote
// tracks where quoted cells are in any CSV encoding/csv accepts.
func markQuotedCRLF(data []byte) (out []byte, crlf bool, mark string) {
	quoted, ended := false, false
	var at []int // where CRLFs inside quotes start
	for i, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted && !ended:
			crlf, ended = i > 0 && data[i-1] == '\r', true
		case c == '\r' && quoted && i+1 < len(data) && data[i+1] == '\n':
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return data, crlf, ""
	}
	r := rune(0xE000) // the Private Use Area: no character of any script
	for bytes.ContainsRune(data, r) {
		r++
	}
	mark = string(r)
	out = make([]byte, 0, len(data)+len(at)*len(mark))
	last := 0
	for _, i := range at {
		out = append(append(out, data[last:i]...), mark...)
		last = i + 2
	}
	return append(out, data[last:]...), crlf, mark
}

// setRecords takes the first record as the header and the rest as rows.
func (t *table) setRecords(records [][]string) error {
	if len(records) == 0 {
		return nil
	}
	t.header, t.records = records[0], records[1:]
	seen := map[string]bool{}
	for i, name := range t.header {
		if seen[t.out(name)] {
			return fmt.Errorf("column %q appears twice in the header, so rows can't be addressed by column name", t.out(name))
		}
		seen[t.out(name)] = true
		if name == KeepIDColumn {
			t.keepCol = i
		}
	}
	return nil
}

// render writes the table back as CSV, with its original BOM and line ends.
// Records end in CRLF if the file's did, but a cell's own line breaks are
// written as they are: encoding/csv's UseCRLF would write a cell's LF as
// CRLF and drop its lone CRs, so each record is written with LF and its
// last byte, the one line end that is the record's, swapped.
func (t *table) render() ([]byte, error) {
	var buf, rec bytes.Buffer
	if t.bom {
		buf.Write(utf8BOM)
	}
	w := csv.NewWriter(&rec)
	for _, r := range append([][]string{t.header}, t.records...) {
		rec.Reset()
		if err := w.Write(r); err != nil {
			return nil, err
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, err
		}
		b := rec.Bytes()
		if t.crlf {
			buf.Write(b[:len(b)-1])
			buf.WriteString("\r\n")
			continue
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// visible lists the header's indexes and names without the hidden column.
func (t *table) visible() (idx []int, names []string) {
	for i, name := range t.header {
		if i != t.keepCol {
			idx = append(idx, i)
			names = append(names, t.out(name))
		}
	}
	return idx, names
}

// column returns the index of a visible column, or -1.
func (t *table) column(name string) int {
	for i, n := range t.header {
		if t.out(n) == name && i != t.keepCol {
			return i
		}
	}
	return -1
}

func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// rowMap is a record as scripts see it: visible columns only.
func (t *table) rowMap(rec []string) map[string]any {
	m := make(map[string]any, len(t.header))
	for i, name := range t.header {
		if i != t.keepCol {
			m[t.out(name)] = t.out(field(rec, i))
		}
	}
	return m
}

// findKeepID returns the index of the first record whose hidden cell holds
// id (a tag of rowTag's, or a raw key), or -1.
func (t *table) findKeepID(id string) int {
	if id == "" || t.keepCol < 0 {
		return -1
	}
	for i, rec := range t.records {
		if field(rec, t.keepCol) == id {
			return i
		}
	}
	return -1
}

// ensureKeepCol adds the hidden column at the end of the header. Records get
// an empty cell at that position; fields a ragged record had past the old
// header stay past the new one instead of being taken for a key.
func (t *table) ensureKeepCol() {
	if t.keepCol >= 0 {
		return
	}
	n := len(t.header)
	t.header = append(t.header, KeepIDColumn)
	t.keepCol = n
	for i, rec := range t.records {
		for len(rec) < n {
			rec = append(rec, "")
		}
		rec = append(rec[:n:n], append([]string{""}, rec[n:]...)...)
		t.records[i] = rec
	}
}

// roomForKeepCol refuses a tab whose rows hold cells right of the header
// when the hidden column is still to be added there: a file is written
// whole, its ragged cells moved past the new column (ensureKeepCol), but a
// Google sheet gets only the cells a mutation writes, so the column would
// take a note beside the table for a key and a key would go over it.
func (t *table) roomForKeepCol(loc location) error {
	if loc.google == nil || t.keepCol >= 0 {
		return nil
	}
	for i, rec := range t.records {
		for j := len(t.header); j < len(rec); j++ {
			if rec[j] != "" {
				return connectors.Errorf(connectors.Logic,
					"%s holds %q in %s%d, right of the header, where keep would put its hidden %s column: "+
						"give that column a header, or move what is right of the table",
					loc.label, clip(rec[j], 40), columnName(j), i+2, KeepIDColumn)
			}
		}
	}
	return nil
}

// columnName is the A1 name of the column at index i: A, Z, AA.
func columnName(i int) string {
	name := ""
	for i++; i > 0; i = (i - 1) / 26 {
		name = string(rune('A'+(i-1)%26)) + name
	}
	return name
}

// pad makes rec at least as long as the header, so every column can be set.
func (t *table) pad(rec []string) []string {
	for len(rec) < len(t.header) {
		rec = append(rec, "")
	}
	return rec
}

func (t *table) result(i int) map[string]any {
	return map[string]any{"rowNumber": int64(i + 1), "row": t.rowMap(t.records[i])}
}
