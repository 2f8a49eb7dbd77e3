package daemon

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// feed is an engine.API whose only working part is its notifications: the
// test sends them, unbuffered, so a send that blocks means the server has
// stopped taking them (it is stuck writing to its client).
type feed struct {
	api.API // nil: a call to anything else panics
	notes   chan api.Notification
}

func (f *feed) Subscribe() (<-chan api.Notification, func()) { return f.notes, func() {} }
func (f *feed) SubscribeScreen() (<-chan api.Notification, func()) {
	return f.notes, func() {}
}

// serveFeed serves a feed on a socket in a short directory of its own.
func serveFeed(t *testing.T) (*feed, *Server, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "kd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &feed{notes: make(chan api.Notification)}
	sock := SocketPath(filepath.Join(dir, "keep.db"))
	srv, err := Serve(context.Background(), f, sock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return f, srv, sock
}

// rawConn connects to the socket and writes what, reading nothing back.
func rawConn(t *testing.T, sock, what string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte(what)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// closeWithin closes srv with a budget of budget and fails unless every
// connection ended inside it: Close fails with the budget's deadline when
// one is still held.
func closeWithin(t *testing.T, srv *Server, budget time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Errorf("Close returned %v: a client that stopped holds the daemon's stop", err)
	}
}

func TestAStuckClientDoesNotHoldTheDaemonsStop(t *testing.T) {
	t.Parallel()

	t.Run("a stream whose reader stopped reading ends when the server stops", func(t *testing.T) {
		t.Parallel()
		f, srv, sock := serveFeed(t)
		// a TUI suspended with ctrl-z: subscribed, reading nothing
		rawConn(t, sock, "GET "+subscribePath+"?"+screenParam+"=1 HTTP/1.1\r\nHost: keep\r\n\r\n")
		big := api.Notification{Kind: api.NoteChanged, Text: strings.Repeat("x", 64<<10)}
		stuck := false
		for i := 0; i < 2000 && !stuck; i++ {
			select {
			case f.notes <- big:
			case <-time.After(time.Second):
				stuck = true // the socket's buffers are full: the server waits in a write
			}
		}
		if !stuck {
			t.Fatal("the server took 128 MB of notes for a client reading none")
		}
		closeWithin(t, srv, 25*time.Second)
	})

	t.Run("a request whose body never comes is given up when the server stops", func(t *testing.T) {
		t.Parallel()
		_, srv, sock := serveFeed(t)
		// a client that died (or froze) half way through sending a call
		rawConn(t, sock, "POST "+pathPrefix+"approve HTTP/1.1\r\nHost: keep\r\nContent-Length: 100\r\n\r\n{\"mutation_id\":")
		time.Sleep(200 * time.Millisecond) // the server is reading the body
		// given up once the body is overdue (bodyTimeout, 10s), not when the
		// stop's budget has run out
		closeWithin(t, srv, 25*time.Second)
	})
}
