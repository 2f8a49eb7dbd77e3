package sandbox

import (
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// installConsole defines console.log/info/warn/error/debug, each line going
// to Host.Log capped at MaxLogLine characters.
func (r *run) installConsole() {
	console := r.vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		_ = console.Set(level, func(call goja.FunctionCall) goja.Value {
			if r.sup.halted() {
				return goja.Undefined()
			}
			line := r.format(call.Arguments)
			if r.sup.halted() { // formatting may have run a toJSON that hit a limit
				return goja.Undefined()
			}
			r.inv.Host.Log(level, line)
			return goja.Undefined()
		})
	}
	_ = r.vm.Set("console", console)
}

// format joins the arguments the way a terminal would show them, stopping
// once the line is over the cap so a huge value is not rendered in full.
func (r *run) format(args []goja.Value) string {
	max := r.lim.MaxLogLine
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.show(a))
		if b.Len() > 4*max { // enough bytes for max characters
			break
		}
	}
	return capLine(b.String(), max)
}

func (r *run) show(v goja.Value) string {
	switch {
	case goja.IsUndefined(v):
		return "undefined"
	case isFunction(v):
		return "[Function]"
	case isObject(v):
		if o := v.(*goja.Object); o.ClassName() == "Error" {
			return safeString(v)
		}
		if out, err := r.encode(goja.Undefined(), v); err == nil && !goja.IsUndefined(out) {
			return out.String()
		}
		return safeString(v)
	}
	return v.String()
}

// capLine cuts s to at most max characters, the last being an ellipsis.
func capLine(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)
	return string(runes[:max-1]) + "…"
}
