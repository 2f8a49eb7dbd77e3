package authoring

import "testing"

// TestNoModelNoRepairer: without a model's repairer the engine is given no
// Repairer at all (a nil interface, not a Repairs holding nil), so a logic
// failure stays with the person: repair is denied by default.
func TestNoModelNoRepairer(t *testing.T) {
	if r := RepairsFrom(nil); r != nil {
		t.Fatalf("RepairsFrom(nil) = %#v, want no repairer", r)
	}
}
