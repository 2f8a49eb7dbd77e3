package connectors

import "testing"

// TestSourceNamesHoldNoColon: an input source or type named with a colon
// is refused where it is declared, so a script's inputId, source:type:id,
// names one input however its id reads.
func TestSourceNamesHoldNoColon(t *testing.T) {
	for _, c := range []struct{ source, typ string }{{"a:b", "c"}, {"a", "b:c"}, {"", "c"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddSource(%q, %q) was taken", c.source, c.typ)
				}
			}()
			NewRegistry().AddSource(c.source, c.typ)
		}()
	}
	NewRegistry().AddSource("files", "file") // a plain one is taken
}
