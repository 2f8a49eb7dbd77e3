package sandbox

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// traceBudget counts a run's console output against MaxLogLines and
// MaxLogBytes. Once either is spent, lines are counted, not formatted.
type traceBudget struct {
	lines, bytes int
	cut          int // lines dropped
}

// consoleLevels are console's methods, each a level of Host.Log.
var consoleLevels = [...]string{"log", "info", "warn", "error", "debug"}

// newConsole builds console.log/info/warn/error/debug for the run that will
// take f (bind.go), each line going to its Host.Log capped at MaxLogLine
// characters, the run's lines capped at MaxLogLines and MaxLogBytes.
func (f *fresh) newConsole() *goja.Object {
	console := f.vm.NewObject()
	for _, level := range consoleLevels {
		_ = console.Set(level, func(call goja.FunctionCall) goja.Value {
			if r := f.run; r != nil {
				r.log(level, call.Arguments)
			}
			return goja.Undefined()
		})
	}
	return console
}

// consoleAccessor is the getter and setter of the global console: a phase
// that never logs (most do not) never builds console's five host functions.
// A read builds it once; an assignment makes console a plain property
// holding what was assigned, as it makes a built-in global. The getter never
// redefines the property, so a getter kept by the script and called after
// it redefined console changes nothing.
func (f *fresh) consoleAccessor() goja.Value {
	var built goja.Value
	return f.vm.ToValue(f.vm.NewProxy(f.g.hasInstance.(*goja.Object), &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, _ goja.Value, args []goja.Value) goja.Value {
			if len(args) > 0 {
				_ = f.vm.GlobalObject().DefineDataProperty("console", args[0], goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
				return goja.Undefined()
			}
			if built == nil {
				built = f.newConsole()
			}
			return built
		},
	}))
}

// installConsole makes console a global for this run, enumerable as an
// assigned global is.
func (r *run) installConsole() {
	_ = r.vm.GlobalObject().DefineAccessorProperty("console", r.console, r.console, goja.FLAG_TRUE, goja.FLAG_TRUE)
}

// log is one console call at level.
func (r *run) log(level string, args []goja.Value) {
	if r.sup.halted() {
		return
	}
	if r.trace.cut > 0 || r.trace.lines >= r.lim.MaxLogLines {
		r.trace.cut++
		return
	}
	line := r.format(args)
	if r.sup.halted() { // formatting may have run a toJSON that hit a limit
		return
	}
	if r.trace.bytes+len(line) > r.lim.MaxLogBytes {
		r.trace.cut++
		return
	}
	r.trace.lines++
	r.trace.bytes += len(line)
	r.inv.Host.Log(level, line)
}

// traceCutNote tells the trace that lines were cut, once, at the run's end.
func (r *run) traceCutNote() {
	if r.trace.cut == 0 {
		return
	}
	what := "lines"
	if r.trace.cut == 1 {
		what = "line"
	}
	r.inv.Host.Log("warn", fmt.Sprintf("… %s more %s cut (trace limit %s lines / %s)",
		thousands(r.trace.cut), what, thousands(r.lim.MaxLogLines), byteSize(r.lim.MaxLogBytes)))
}

// thousands renders n with comma separators: 100000 → "100,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// byteSize renders a byte count the way limits are written: "256 KiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%s MiB", thousands(n>>20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%s KiB", thousands(n>>10))
	}
	return thousands(n) + " bytes"
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
		if out, err := r.encodeLine(v); err == nil && !goja.IsUndefined(out) {
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
