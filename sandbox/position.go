package sandbox

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// locator finds where a declaration is written in the original source, so a
// diagnostic found on the evaluated declaration can still say file:line:col.
// It searches text rather than an AST: the declaration was evaluated, and the
// names it holds appear literally in the file in all but contrived cases.
type locator struct {
	file string
	src  string
	// lines are where src's lines start (newLocator): a declaration's checks
	// convert positions once per call site, and counting lines from the
	// top each time made that quadratic in the file
	lines []int
}

func newLocator(file, src string) locator {
	return locator{file: file, src: src, lines: lineStarts(src)}
}

// lineStarts is the offset at which each line of s starts.
func lineStarts(s string) []int {
	starts := []int{0}
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return starts
		}
		off += i + 1
		starts = append(starts, off)
	}
}

// lineOf is the 1-based line holding offset off, and that line's start.
func lineOf(starts []int, off int) (line, start int) {
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	return i, starts[i-1]
}

// pos converts a byte offset into a 1-based line and column (in characters);
// 0, 0 for a negative offset.
func (l locator) pos(off int) (line, col int) {
	if off < 0 || off > len(l.src) {
		return 0, 0
	}
	lines := l.lines
	if lines == nil {
		lines = lineStarts(l.src)
	}
	line, start := lineOf(lines, off)
	return line, utf8.RuneCountInString(l.src[start:off]) + 1
}

// offset is the byte offset of a 1-based line and column (in characters),
// -1 when the file has no such place.
func (l locator) offset(line, col int) int {
	lines := l.lines
	if lines == nil {
		lines = lineStarts(l.src)
	}
	if line < 1 || line > len(lines) {
		return -1
	}
	off := lines[line-1]
	for i := 1; i < col; i++ {
		if off >= len(l.src) || l.src[off] == '\n' {
			return -1
		}
		_, size := utf8.DecodeRuneInString(l.src[off:])
		off += size
	}
	return off
}

func (l locator) diag(off int, format string, args ...any) Diagnostic {
	line, col := l.pos(off)
	return Diagnostic{File: l.file, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
}

// literal finds the first string literal holding exactly s at or after from.
func (l locator) literal(from int, s string) int {
	return l.first(from, `"`+s+`"`, `'`+s+`'`, "`"+s+"`")
}

// key finds the first property key (`name:`, `"name":`, `name(`, `async
// name(`) at or after from: name, in matching quotes or none, not preceded
// by a part of a longer name or a member access, followed by a colon or a
// parenthesis. It returns the offset of the key (its opening quote, if
// quoted).
//
// A declaration's checks ask for keys such as a handler's name once per
// handler, so the search looks only at where the name occurs: a pattern
// run over the rest of the file for each made validating a file of 500
// producers take ten seconds.
func (l locator) key(from int, name string) int {
	if from < 0 {
		from = 0
	}
	src := l.src
	for i := from; i < len(src); {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return -1
		}
		start, end := i+j, i+j+len(name)
		i = start + 1
		if start > from && end < len(src) && (src[start-1] == '"' || src[start-1] == '\'') && src[end] == src[start-1] {
			start, end = start-1, end+1
		}
		if start > from && partOfName(src[start-1]) {
			continue
		}
		for end < len(src) && strings.IndexByte(" \t\n\f\r", src[end]) >= 0 {
			end++
		}
		if end < len(src) && (src[end] == ':' || src[end] == '(') {
			return start
		}
	}
	return -1
}

// partOfName says whether c before a name makes it part of a longer name
// or a member access.
func partOfName(c byte) bool {
	return c == '_' || c == '$' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// first returns the smallest offset >= from at which any needle occurs.
func (l locator) first(from int, needles ...string) int {
	if from < 0 {
		from = 0
	}
	best := -1
	for _, n := range needles {
		if i := strings.Index(l.src[from:], n); i >= 0 && (best < 0 || from+i < best) {
			best = from + i
		}
	}
	return best
}

// or returns a if it was found, else b.
func or(a, b int) int {
	if a >= 0 {
		return a
	}
	return b
}
