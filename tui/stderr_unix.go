//go:build unix

package tui

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"keep/tui/printable"
)

// holdStderr takes the process's standard error for as long as the TUI
// draws. The terminal is the TUI's then, and whatever else the process
// writes to fd 2 — a library's own logger (go-imap's prints a server's
// answer), Go's log package, anything an in-process engine's connector
// pulls in — would land between frames, escape sequences a remote server
// or a script chose included. Holding fd 2 by place covers every writer,
// named or not. What comes through goes to keep's log, each line made
// printable; a crash's report still reaches the terminal
// (debug.SetCrashOutput), as it would have. release gives fd 2 back and
// returns once every line written before it is logged.
func holdStderr(logger *slog.Logger) (release func()) {
	saved, err := unix.Dup(2)
	if err != nil {
		return func() {}
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(saved)
		return func() {}
	}
	if err := unix.Dup2(int(w.Fd()), 2); err != nil {
		unix.Close(saved)
		r.Close()
		w.Close()
		return func() {}
	}
	w.Close() // fd 2 holds the pipe's write end now
	terminal := os.NewFile(uintptr(saved), "stderr")
	_ = debug.SetCrashOutput(terminal, debug.CrashOptions{})
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		logLines(r, logger)
	}()
	return func() {
		_ = debug.SetCrashOutput(nil, debug.CrashOptions{})
		// fd 2's pipe end was the last: the reader sees the end
		_ = unix.Dup2(saved, 2)
		<-logged
		r.Close()
		terminal.Close()
	}
}

// maxStderrLine is what one log entry keeps of a line; the rest of a
// longer one goes in entries of its own.
const maxStderrLine = 4 << 10

// logLines logs each line read from r until it ends.
func logLines(r io.Reader, logger *slog.Logger) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			logger.Warn("written to standard error while the TUI ran", "line", printable.Line(string(trimNewline(line))))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
