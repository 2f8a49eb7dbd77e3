package sandbox

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/dop251/goja/parser"
	"github.com/go-sourcemap/sourcemap"
)

// inlineMapPrefix starts the source map esbuild appends to the code.
const inlineMapPrefix = "//# sourceMappingURL=data:application/json;base64,"

// parseDiagnostic turns a parse error of the transformed code into a
// diagnostic at the position in the file as written. The transformed code
// is never shown: goja's message quotes it ("Line 41:17 …").
func parseDiagnostic(loc locator, code string, err error) Diagnostic {
	d := Diagnostic{File: loc.file, Message: "the file does not compile"}
	var list parser.ErrorList
	var one *parser.Error
	switch {
	case errors.As(err, &list) && len(list) > 0:
		one = list[0]
	case errors.As(err, &one):
	default:
		return d
	}
	d.Message = one.Message
	line, col, ok := sourcePosition(code, one.Position.Line, one.Position.Column)
	if !ok {
		return d
	}
	d.Line, d.Col = line, col
	if off := loc.offset(line, col); off >= 0 {
		rest := loc.src[off:]
		switch {
		case strings.HasPrefix(rest, "import"):
			d.Message = "import() is not available: a workflow is one file and loads no modules (" + one.Message + ")"
		}
	}
	return d
}

// sourcePosition maps a position in the transformed code to the file as
// written, through the inline source map.
func sourcePosition(code string, line, col int) (int, int, bool) {
	return mapPosition(sourceMap(code), line, col)
}

// sourceMap reads the inline source map at the end of the code; nil if it
// has none. The static checks map every call site through it, so they read
// it once (callChecker.at).
func sourceMap(code string) *sourcemap.Consumer {
	i := strings.LastIndex(code, inlineMapPrefix)
	if i < 0 {
		return nil
	}
	enc := strings.TrimSpace(code[i+len(inlineMapPrefix):])
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil
	}
	sm, err := sourcemap.Parse("", data)
	if err != nil {
		return nil
	}
	return sm
}

// mapPosition maps a position in the transformed code through sm.
func mapPosition(sm *sourcemap.Consumer, line, col int) (int, int, bool) {
	if sm == nil {
		return 0, 0, false
	}
	// The map's columns are 0-based; the parser's and ours are 1-based.
	_, _, l, c, ok := sm.Source(line, col-1)
	if !ok || l <= 0 {
		return 0, 0, false
	}
	return l, c + 1, true
}
