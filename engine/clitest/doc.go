// Package clitest holds tests that build and run the real keep binary: the
// CLI contract (DESIGN.md §5), the daemon over its socket, and one
// end-to-end TUI flow driven through tmux.
package clitest
