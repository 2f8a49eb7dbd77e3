package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// A config error names the file, the line and column, and the key
// (PATH:LINE:COL: KEY …), and says what is expected, as `keep validate`
// names a script's errors.

// keyError is a bad value found after decoding: the key it is at, so
// Load can say where in the file that key is set.
type keyError struct {
	key []string
	nth int // which [[table]] of an array of tables, from 0
	err error
}

func (e *keyError) Error() string { return e.err.Error() }

// bad is an error about the value at the dotted key.
func bad(key string, format string, a ...any) error {
	return &keyError{key: splitKey(key), err: fmt.Errorf(format, a...)}
}

// located prefixes msg with path and, when key is set in src, its line and
// column.
func located(path, src string, key []string, nth int, msg string) string {
	if line, col := keyPos(src, key, nth); line > 0 {
		return fmt.Sprintf("config %s:%d:%d: %s", path, line, col, msg)
	}
	return fmt.Sprintf("config %s: %s", path, msg)
}

// At is err, found in the value at the dotted key after Load (by the
// connector or the account it configures), said as Load says its own:
// the file, the line and column where key is set, and the key. Without a
// file (the defaults) it is the key and err.
func (c Config) At(key string, err error) error {
	if err == nil {
		return nil
	}
	if c.Path == "" {
		return fmt.Errorf("%s: %w", key, err)
	}
	return &atError{msg: located(c.Path, c.src, splitKey(key), 0, key+": "+err.Error()), err: err}
}

// atError keeps the error At located, for errors.Is and As.
type atError struct {
	msg string
	err error
}

func (e *atError) Error() string { return e.msg }
func (e *atError) Unwrap() error { return e.err }

// keyPos is where key is set in src: the line and column (from 1) of the
// key's name or of the table header that opens it; for an array of
// tables, of its nth header. A key that is not set there gives the place
// of the nearest enclosing key that is; none gives 0, 0.
func keyPos(src string, key []string, nth int) (line, col int) {
	for n := len(key); n > 0; n-- {
		seen := 0
		var table []string
		for i, raw := range strings.Split(src, "\n") {
			text := strings.TrimRight(raw, "\r")
			trimmed := strings.TrimLeft(text, " \t\ufeff")
			c := len(text) - len(trimmed) + 1
			var at []string
			switch {
			case trimmed == "" || trimmed[0] == '#':
				continue
			case strings.HasPrefix(trimmed, "[["):
				end := strings.Index(trimmed, "]]")
				if end < 0 {
					continue
				}
				table = splitKey(trimmed[2:end])
				at = table
			case trimmed[0] == '[':
				end := strings.Index(trimmed, "]")
				if end < 0 {
					continue
				}
				table = splitKey(trimmed[1:end])
				at = table
			default:
				eq := unquotedIndex(trimmed, '=')
				if eq < 0 {
					continue
				}
				at = append(slices.Clone(table), splitKey(trimmed[:eq])...)
			}
			if len(at) < n || !slices.Equal(at[:n], key[:n]) {
				continue
			}
			if nth == 0 {
				return i + 1, c
			}
			// the nth [[table]] header of an array of tables
			if strings.HasPrefix(trimmed, "[[") && len(at) == n {
				if seen == nth {
					return i + 1, c
				}
				seen++
			}
		}
		nth = 0
	}
	return 0, 0
}

// unquotedIndex is the first b in s outside a quoted string, or -1.
func unquotedIndex(s string, b byte) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch {
		case quote != 0:
			if s[i] == quote {
				quote = 0
			} else if s[i] == '\\' && quote == '"' {
				i++
			}
		case s[i] == '"' || s[i] == '\'':
			quote = s[i]
		case s[i] == b:
			return i
		}
	}
	return -1
}

// splitKey splits a dotted TOML key into its pieces, unquoted.
func splitKey(s string) []string {
	var out []string
	for {
		dot := unquotedIndex(s, '.')
		piece := s
		if dot >= 0 {
			piece = s[:dot]
		}
		piece = strings.TrimSpace(piece)
		if len(piece) >= 2 && (piece[0] == '"' || piece[0] == '\'') && piece[len(piece)-1] == piece[0] {
			if piece[0] == '"' {
				if u, err := strconv.Unquote(piece); err == nil {
					piece = u
				} else {
					piece = piece[1 : len(piece)-1]
				}
			} else {
				piece = piece[1 : len(piece)-1]
			}
		}
		out = append(out, piece)
		if dot < 0 {
			return out
		}
		s = s[dot+1:]
	}
}

var (
	decodeLine   = regexp.MustCompile(`^toml: (?:line \d+ )?\(last key "([^"]*)"\): (.*)$`)
	incompatible = regexp.MustCompile(`^incompatible types: TOML value has type (.+); destination has type (.+)$`)
	notTable     = regexp.MustCompile(`^type mismatch for .*: expected table but found (.+)$`)
)

// decodeError turns the TOML decoder's error into one that says where,
// which key, and what the key takes.
func decodeError(path, src string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		return fmt.Errorf("config %s:%d:%d: %s", path, pe.Position.Line, pe.Position.Col, msg)
	}
	m := decodeLine.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	key, msg := m[1], m[2]
	if t := incompatible.FindStringSubmatch(msg); t != nil {
		msg = fmt.Sprintf("%s takes %s, got %s", key, expectedWords(t[2]), tomlWords(t[1]))
	} else if t := notTable.FindStringSubmatch(msg); t != nil {
		msg = fmt.Sprintf("%s is a table ([%s]), got %s", key, key, tomlWords(t[1]))
	} else {
		msg = key + ": " + msg
	}
	return errors.New(located(path, src, splitKey(key), 0, msg))
}

// expectedWords says a Go destination kind as a person would.
func expectedWords(dst string) string {
	switch dst {
	case "slice":
		return `a list (["a", "b"])`
	case "integer":
		return "a whole number without quotes"
	case "float":
		return "a number"
	case "string", "primitive (string-like)":
		return "a string in quotes"
	case "boolean":
		return "true or false"
	case "map":
		return "a table"
	}
	return dst
}

// tomlWords says the type of a value the decoder found.
func tomlWords(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"):
		return "a number"
	case strings.HasPrefix(t, "float"):
		return "a number with a fraction"
	case t == "bool":
		return "true/false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map"):
		return "a table"
	}
	return t
}

// unknownKeys names each key the file sets that keep does not read, where
// it is, and what was likely meant: a near spelling in the same table, or
// the table the key belongs in.
func unknownKeys(path, src string, md toml.MetaData, keys []toml.Key) error {
	var lines []string
	for _, k := range keys {
		// a table that is not known at all is named once, not with each key in it
		if len(k) > 1 && slices.ContainsFunc(keys, func(o toml.Key) bool { return slices.Equal(o, k[:len(k)-1]) }) {
			continue
		}
		name, parent := k[len(k)-1], []string(k[:len(k)-1])
		known := knownKeys(parent)
		msg := "unknown key " + k.String()
		if md.Type(k...) == "Hash" {
			msg = "unknown table [" + k.String() + "]"
		}
		if near := nearest(name, known); near != "" {
			msg += "; did you mean " + toml.Key(append(slices.Clone(parent), near)).String() + "?"
		} else if elsewhere := homesOf(name); len(elsewhere) > 0 {
			msg += "; " + name + " belongs in [" + strings.Join(elsewhere, "] or [") + "]"
		} else if len(known) > 0 {
			where := "the top level"
			if len(parent) > 0 {
				where = "[" + toml.Key(parent).String() + "]"
			}
			msg += "; " + where + " takes " + strings.Join(known, ", ")
		}
		lines = append(lines, located(path, src, k, 0, msg))
	}
	return errors.New(strings.Join(lines, "\n"))
}

var configType = reflect.TypeFor[Config]()

// typeAt is the Go type that the key decodes into, or nil.
func typeAt(key []string) reflect.Type {
	t := configType
	for _, piece := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, piece)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// knownKeys are the keys the table at key takes, sorted; none when any
// name goes there (accounts, mcp) or it is no table.
func knownKeys(key []string) []string {
	t := typeAt(key)
	if t == nil || t.Kind() != reflect.Struct || t == reflect.TypeFor[Duration]() {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	sort.Strings(out)
	return out
}

// homesOf lists the tables that take a key called name (NAME stands for
// any name: accounts.NAME).
func homesOf(name string) []string {
	var out []string
	var walk func(t reflect.Type, at []string)
	walk = func(t reflect.Type, at []string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Map:
			walk(t.Elem(), append(at, "NAME"))
		case t.Kind() == reflect.Struct && t != reflect.TypeFor[Duration]():
			for i := range t.NumField() {
				tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
				if tag == "" || tag == "-" {
					continue
				}
				if tag == name && len(at) > 0 {
					out = append(out, strings.Join(at, "."))
				}
				walk(t.Field(i).Type, append(slices.Clone(at), tag))
			}
		}
	}
	walk(configType, nil)
	return out
}

// nearest is the known key one or two edits from name, if there is one.
func nearest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(name, k); d < bestD && d <= max(1, len(k)/3) {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the edit distance between a and b (a swap counts one).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
