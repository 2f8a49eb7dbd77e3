package sandbox

import (
	"testing"
	"time"
)

// loadUnnamed loads a script in this process letting through the uses of
// ctx the analysis cannot name (which Load refuses): for the tests of what
// the run's own guards do with a script that reaches ctx anyway.
func loadUnnamed(t testing.TB, h handlers) *Script {
	t.Helper()
	s, err := loadChecked("t.js", []byte(h.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}, true)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, numbered(h.source()))
	}
	return s
}
