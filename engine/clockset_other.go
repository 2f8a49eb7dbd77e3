//go:build !linux

package engine

import (
	"context"
	"errors"
)

// clockSets has no kernel notice of a clock set outside Linux: watchClock
// then compares the two clocks once a clockCheck.
func clockSets(context.Context) (<-chan struct{}, error) {
	return nil, errors.New("no notice of the clock being set on this system")
}
