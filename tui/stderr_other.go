//go:build !unix

package tui

import "log/slog"

// holdStderr leaves standard error as it is where fd 2 cannot be moved.
func holdStderr(*slog.Logger) (release func()) { return func() {} }
