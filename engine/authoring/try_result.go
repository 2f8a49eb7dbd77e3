package authoring

import (
	"fmt"
	"strings"
	"unicode"

	"keep/connectors"
)

// A captured mutation is answered as the method would answer it: next
// reads what the call returned (the path written, the uid of the event
// made) to publish what follows, so an answer of another shape fails a
// dry run where the real run goes on, and hides every mutation after it.
// The answer is built from the method's Result (its TypeScript type, the
// one keep.d.ts and the reference show): a field the call's own arguments
// name is answered with the argument (files.write's path, calendar.update's
// uid and fields); any other string is a placeholder unique to the call, so
// events keyed by it stay apart; numbers are 0, booleans false, lists
// empty, optional fields left out. dryRun: true says it was never made.

// dryAnswer is the captured call's answer: the nth captured mutation of
// this dry run, by meth with params.
func dryAnswer(meth connectors.Method, params map[string]any, n int) any {
	t, ok := parseTSType(meth.Result)
	if !ok {
		return map[string]any{"dryRun": true}
	}
	v := t.value(params, fmt.Sprintf("dry-run-%d", n), "")
	if m, ok := v.(map[string]any); ok {
		if _, taken := m["dryRun"]; !taken {
			m["dryRun"] = true
		}
	}
	return v
}

// tsType is the little of TypeScript that methods' Result strings use.
type tsType struct {
	kind   string // object, array, record, union, string, number, boolean, literal, any
	fields []tsField
	elem   []*tsType // union members
	lit    any
}

type tsField struct {
	name     string
	optional bool
	t        *tsType
}

// value is a value of t. params are the call's arguments (a top-level
// object's fields take them by name); tag marks placeholder strings.
func (t *tsType) value(params map[string]any, tag, field string) any {
	switch t.kind {
	case "object":
		out := map[string]any{}
		for _, f := range t.fields {
			if f.optional {
				continue
			}
			if p, ok := params[f.name]; ok && f.t.takes(p) {
				out[f.name] = p
				continue
			}
			out[f.name] = f.t.value(nil, tag, f.name)
		}
		return out
	case "array":
		return []any{}
	case "record":
		return map[string]any{}
	case "union":
		for _, m := range t.elem {
			if m.kind != "null" && m.kind != "undefined" {
				return m.value(params, tag, field)
			}
		}
		return nil
	case "string":
		if field == "" {
			return tag
		}
		return tag + "-" + field
	case "number":
		return 0
	case "boolean":
		return false
	case "literal":
		return t.lit
	}
	return nil
}

// takes says whether an argument v may stand for a value of t.
func (t *tsType) takes(v any) bool {
	switch t.kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		switch v.(type) {
		case int, int64, float64:
			return true
		}
		return false
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "literal":
		return v == t.lit
	case "union":
		for _, m := range t.elem {
			if m.kind != "null" && m.kind != "undefined" && m.takes(v) {
				return true
			}
		}
		return false
	case "object", "record":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return v != nil
}

// parseTSType parses s whole, or says it cannot.
func parseTSType(s string) (*tsType, bool) {
	p := &tsParser{s: s}
	t, ok := p.union()
	p.space()
	if !ok || p.i != len(p.s) {
		return nil, false
	}
	return t, true
}

type tsParser struct {
	s string
	i int
}

func (p *tsParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *tsParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *tsParser) ident() string {
	p.space()
	j := p.i
	for j < len(p.s) && (p.s[j] == '_' || p.s[j] == '$' || unicode.IsLetter(rune(p.s[j])) || unicode.IsDigit(rune(p.s[j]))) {
		j++
	}
	id := p.s[p.i:j]
	p.i = j
	return id
}

func (p *tsParser) union() (*tsType, bool) {
	var members []*tsType
	for {
		t, ok := p.postfix()
		if !ok {
			return nil, false
		}
		members = append(members, t)
		if !p.eat('|') {
			break
		}
	}
	if len(members) == 1 {
		return members[0], true
	}
	return &tsType{kind: "union", elem: members}, true
}

func (p *tsParser) postfix() (*tsType, bool) {
	t, ok := p.primary()
	for ok {
		save := p.i
		if !p.eat('[') || !p.eat(']') {
			p.i = save
			break
		}
		t = &tsType{kind: "array", elem: []*tsType{t}}
	}
	return t, ok
}

func (p *tsParser) primary() (*tsType, bool) {
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '(':
		p.i++
		t, ok := p.union()
		return t, ok && p.eat(')')
	case c == '{':
		p.i++
		return p.object()
	case c == '"' || c == '\'':
		end := strings.IndexByte(p.s[p.i+1:], c)
		if end < 0 {
			return nil, false
		}
		lit := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return &tsType{kind: "literal", lit: lit}, true
	}
	switch id := p.ident(); id {
	case "":
		return nil, false
	case "string", "number", "boolean", "null", "undefined":
		return &tsType{kind: id}, true
	case "true", "false":
		return &tsType{kind: "literal", lit: id == "true"}, true
	case "Array":
		if !p.eat('<') {
			return nil, false
		}
		t, ok := p.union()
		return &tsType{kind: "array", elem: []*tsType{t}}, ok && p.eat('>')
	case "Record":
		if !p.eat('<') {
			return nil, false
		}
		if _, ok := p.union(); !ok || !p.eat(',') {
			return nil, false
		}
		_, ok := p.union()
		return &tsType{kind: "record"}, ok && p.eat('>')
	default: // any, unknown, and names keep does not spell out
		return &tsType{kind: "any"}, true
	}
}

func (p *tsParser) object() (*tsType, bool) {
	t := &tsType{kind: "object"}
	for {
		if p.eat('}') {
			return t, true
		}
		name := p.ident()
		if name == "" {
			return nil, false
		}
		f := tsField{name: name, optional: p.eat('?')}
		if !p.eat(':') {
			return nil, false
		}
		ft, ok := p.union()
		if !ok {
			return nil, false
		}
		f.t = ft
		t.fields = append(t.fields, f)
		if !p.eat(',') && !p.eat(';') {
			if p.eat('}') {
				return t, true
			}
			return nil, false
		}
	}
}
