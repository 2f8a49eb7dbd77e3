package sandbox

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// MaxNesting bounds how deeply brackets — ( [ { and a template's ${ — may
// nest in a workflow file. esbuild and goja parse recursively, a level of
// nesting a few frames of Go stack, so a file of nothing but brackets
// (300,000 of them fit in MaxSourceSize) would grow the loading worker's
// stack past its memory limit: the file is refused before it is parsed,
// at the bracket that went past the bound. Nothing written by hand, or
// generated as data, nests a thousand deep.
const MaxNesting = 1000

// nestingDiagnostic is the diagnostic of a file whose brackets nest deeper
// than MaxNesting, at the first bracket past it; nil for any other file.
//
// It reads the source as JavaScript (or TypeScript) closely enough to skip
// what is not code: comments, strings, template text and regular
// expressions. Where it reads a regular expression as a division or the
// other way round, it miscounts a bracket or two, or skips to the end of a
// line: far from MaxNesting either way.
func nestingDiagnostic(fileName string, src []byte) *Diagnostic {
	s := &nestScan{src: src}
	if at := s.scan(); at >= 0 {
		line, col := lineCol(src, at)
		return &Diagnostic{File: fileName, Line: line, Col: col, Message: fmt.Sprintf(
			"nesting too deep: brackets here are more than %d levels deep", MaxNesting)}
	}
	return nil
}

// nestScan counts the nesting of brackets in src.
type nestScan struct {
	src   []byte
	depth int
	// templates holds the depth at each open ${ of a template, whose }
	// goes back to the template's text
	templates []int
	tooDeep   int // the offset of the bracket past MaxNesting; -1: none yet
}

// scan returns the offset of the first bracket past MaxNesting, or -1.
func (s *nestScan) scan() int {
	src, n := s.src, len(s.src)
	s.tooDeep = -1
	// prev is the last character of code that was not space, for telling
	// a regular expression from a division
	var prev byte
	for i := 0; i < n && s.tooDeep < 0; {
		c := src[i]
		switch {
		case c == '/' && i+1 < n && src[i+1] == '/':
			i = skipPast(src, i, "\n")
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			i = skipPast(src, i+2, "*/")
			continue
		case c == '"' || c == '\'':
			i = skipQuoted(src, i)
		case c == '`':
			i = s.template(i + 1)
		case c == '/' && regexMayStart(prev):
			i = skipRegex(src, i)
		case c == '(' || c == '[' || c == '{':
			s.open(i)
			i++
		case c == '}' && len(s.templates) > 0 && s.templates[len(s.templates)-1] == s.depth:
			s.templates = s.templates[:len(s.templates)-1]
			s.depth--
			i = s.template(i + 1)
			c = '`' // what follows follows a template
		case c == ')' || c == ']' || c == '}':
			s.depth = max(s.depth-1, 0)
			i++
		default:
			i++
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return s.tooDeep
}

// open counts a bracket at offset at.
func (s *nestScan) open(at int) {
	if s.depth++; s.depth > MaxNesting && s.tooDeep < 0 {
		s.tooDeep = at
	}
}

// template skips template text from i (just past ` or a substitution's })
// to its end, past `, or past a ${, counted as a bracket.
func (s *nestScan) template(i int) int {
	src, n := s.src, len(s.src)
	for i < n {
		switch {
		case src[i] == '\\':
			i += 2
			continue
		case src[i] == '`':
			return i + 1
		case src[i] == '$' && i+1 < n && src[i+1] == '{':
			s.open(i)
			s.templates = append(s.templates, s.depth)
			return i + 2
		}
		i++
	}
	return i
}

// skipPast is the offset past the first end at or after i (or len(src)).
func skipPast(src []byte, i int, end string) int {
	if j := bytes.Index(src[i:], []byte(end)); j >= 0 {
		return i + j + len(end)
	}
	return len(src)
}

// skipQuoted is the offset past the string literal at i, or past the end of
// its line when it is not closed there.
func skipQuoted(src []byte, i int) int {
	q := src[i]
	for i++; i < len(src) && src[i] != q && src[i] != '\n'; i++ {
		if src[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipRegex is the offset past the regular expression literal at i (its
// flags are letters, read as code), or past the end of its line.
func skipRegex(src []byte, i int) int {
	inClass := false
	for i++; i < len(src) && src[i] != '\n'; i++ {
		switch src[i] {
		case '\\':
			i++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				return i + 1
			}
		}
	}
	return i + 1
}

// regexMayStart says whether a / after prev (the last character of code
// that was not space; 0 at the start) begins a regular expression rather
// than a division: after an operator or an opening bracket, not after a
// name, a number or a closing bracket. (After a keyword such as return it
// is taken for a division: a miscount, not a failure.)
func regexMayStart(prev byte) bool {
	switch prev {
	case 0, '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^':
		return true
	}
	return false
}

// lineCol is the 1-based line and column (in characters) of byte offset at
// in src.
func lineCol(src []byte, at int) (line, col int) {
	line, start := 1, 0
	for i := 0; i < at; i++ {
		if src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(src[start:at]) + 1
}
