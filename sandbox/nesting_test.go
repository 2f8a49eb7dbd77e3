package sandbox

import (
	"strings"
	"testing"
)

func TestNestingDiagnostic(t *testing.T) {
	t.Parallel()
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	past := MaxNesting + 1
	for _, c := range []struct {
		name, src string
		line, col int // 0: no diagnostic
	}{
		{"parentheses at the bound", "export default " + deep("(", ")", MaxNesting), 0, 0},
		{"parentheses past it", "export default " + deep("(", ")", past), 1, 16 + MaxNesting},
		{"arrays past it, on a later line, after wide characters", "// é\nconst é = " + deep("[", "]", past), 2, 11 + MaxNesting},
		{"objects past it", "x = " + deep("{a:", "}", past), 1, 5 + 3*MaxNesting},
		{"template substitutions past it", "x = " + deep("`${", "}`", past), 1, 6 + 3*MaxNesting},
		{"opened and closed again and again", strings.Repeat(deep("(", ")", MaxNesting)+";\n", 3), 0, 0},
		{"in a line comment", "// " + strings.Repeat("(", 2*MaxNesting) + "\nx = 1", 0, 0},
		{"in a block comment", "/* " + strings.Repeat("{", 2*MaxNesting) + " */ x = 1", 0, 0},
		{"in strings", `x = "` + strings.Repeat("(", past) + `" + '` + strings.Repeat("[", past) + `'`, 0, 0},
		{"in template text", "x = `" + strings.Repeat("{", past) + "${1}" + strings.Repeat("(", past) + "`", 0, 0},
		{"in a regular expression", "x = /" + strings.Repeat("\\(", past) + "[(]/.test(s)", 0, 0},
		{"a division is not a regular expression", "x = (a) / 2 / (" + deep("(", ")", past) + ")", 1, 15 + MaxNesting},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := nestingDiagnostic("wf.js", []byte(c.src))
			switch {
			case c.line == 0 && d != nil:
				t.Errorf("a diagnostic: %v", d)
			case c.line != 0 && d == nil:
				t.Errorf("no diagnostic")
			case c.line != 0 && (d.Line != c.line || d.Col != c.col || !strings.HasPrefix(d.Message, "nesting too deep")):
				t.Errorf("got %v, want wf.js:%d:%d: nesting too deep", d, c.line, c.col)
			}
		})
	}
}
