package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"keep/engine/api"
)

// Server answers engine.API calls on a unix socket. Start it with Serve,
// stop it with Close.
type Server struct {
	api  api.API
	path string
	log  *slog.Logger
	http *http.Server

	// quit ends the notification streams: http.Server.Shutdown waits for
	// connections to go idle, and a stream never does on its own.
	quit      chan struct{}
	served    chan struct{} // closed when the accept loop has returned
	closeOnce sync.Once
	closeErr  error
}

// boundHook, when set (tests), sees the socket's path as soon as it is
// bound, before its mode is narrowed.
var boundHook func(path string)

// Serve listens on socketPath and answers every engine.API method of api
// until Close. A socket file left behind by a daemon that died is replaced;
// one that still answers is not (that daemon holds the database). ctx bounds
// the start only (its values reach every request): a daemon stopping on a
// signal still lets a call in progress finish, in Close. logger defaults to
// slog.Default().
func Serve(ctx context.Context, api api.API, socketPath string, logger *slog.Logger) (*Server, error) {
	if api == nil {
		panic("daemon: Serve with a nil engine.API")
	}
	if logger == nil {
		logger = slog.Default()
	}
	if !reachable(socketPath) {
		return nil, fmt.Errorf("daemon: %s: the name is too long for a unix socket (about %d bytes), even through its directory", socketPath, maxSunPath)
	}
	if err := removeStale(ctx, socketPath); err != nil {
		return nil, err
	}
	// Anyone who can connect can approve mutations: only the owner may. The
	// socket is bound in a folder of its own that only the owner can enter
	// (MkdirTemp makes it 0700), made 0600 there, and only then renamed to
	// socketPath: nobody else can reach it before its mode is narrowed,
	// whatever the umask and the database folder's mode, and nobody finds
	// it at socketPath with a wider one (a client connects by path; the
	// listener keeps its socket). A path longer than a socket address
	// takes is bound through its directory's descriptor (sockpath.go).
	private, err := os.MkdirTemp(filepath.Dir(socketPath), ".keep-socket-")
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	defer os.RemoveAll(private)
	tmp := filepath.Join(private, "s")
	ln, err := listenUnix(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("daemon: listen on %s: %w", socketPath, err)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // Close removes socketPath itself
	}
	if boundHook != nil {
		boundHook(tmp)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("daemon: %w", err)
	}
	if err := os.Rename(tmp, socketPath); err != nil {
		ln.Close()
		return nil, fmt.Errorf("daemon: %w", err)
	}
	s := &Server{
		api:    api,
		path:   socketPath,
		log:    logger.With("component", "daemon", "socket", socketPath),
		quit:   make(chan struct{}),
		served: make(chan struct{}),
	}
	// No ReadTimeout or WriteTimeout: they would cut a notification stream
	// (and a long call) short. What a client owes is bounded one step at a
	// time instead: its headers (ReadHeaderTimeout), its body (handle), the
	// next request on a kept connection (IdleTimeout), and a stream's
	// reader taking each note (subscribe).
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.handle),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ReadHeaderTimeout: bodyTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("daemon socket stopped", "err", err)
		}
	}()
	s.log.Debug("listening")
	return s, nil
}

// What a client that stops half way may hold: a client on this machine
// sends a call at once and reads its answer at once, so these are far
// beyond any live one's needs and well inside the 30 seconds a stopping
// daemon gives the calls in progress (RunDaemon), which a client that
// froze (a TUI suspended with ctrl-z) or died half way through a request
// would otherwise take whole, and make the stop fail.
const (
	// bodyTimeout bounds the arrival of a request's headers, and then of
	// its body.
	bodyTimeout = 10 * time.Second
	// idleTimeout closes a kept connection no request came on (a client
	// keeps its idle ones for 30s).
	idleTimeout = 2 * time.Minute
)

// streamWriteTimeout bounds how long a stream waits for its reader to take
// a note once the socket's buffers are full: a screen that stopped reading
// is let go (it subscribes again, and reads everything afresh, when it
// comes back) instead of holding the connection forever.
const streamWriteTimeout = time.Minute

// removeStale removes a socket file nobody answers on. Only a refused
// connection proves that; any other failure (permission, a file that is not
// a socket) is reported rather than guessed at.
func removeStale(ctx context.Context, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("daemon: %s exists and is not a socket; not replacing it", path)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := dialUnix(dctx, path)
	if err == nil {
		conn.Close()
		return fmt.Errorf("daemon: another daemon answers on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("daemon: checking %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("daemon: removing a stale socket: %w", err)
	}
	return nil
}

// Close stops accepting, ends the notification streams, waits for calls in
// progress until ctx is done (then cuts them off), and removes the socket
// file. It is safe to call more than once.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		close(s.quit)
		if err := s.http.Shutdown(ctx); err != nil {
			s.http.Close()
			s.closeErr = fmt.Errorf("daemon: shutdown: %w", err)
		}
		<-s.served
		// the listener was made under another name (Serve): the file is ours
		// to remove
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) && s.closeErr == nil {
			s.closeErr = fmt.Errorf("daemon: %w", err)
		}
		s.log.Debug("stopped")
	})
	return s.closeErr
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == subscribePath {
		s.subscribe(w, r)
		return
	}
	m, ok := routes[strings.TrimPrefix(r.URL.Path, pathPrefix)]
	if !ok || r.Method != http.MethodPost {
		// Most likely a client newer than this daemon.
		writeJSON(w, http.StatusNotFound, errorBody{Kind: kindError,
			Message: fmt.Sprintf("daemon: no method %s %s (is the daemon older than this keep?)", r.Method, r.URL.Path)})
		return
	}
	// the body is read whole under a deadline, and the deadline lifted
	// before the call: the server's watch for the client going away reads
	// on with it, and a deadline left would cancel a long call
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		// the deadline stays: the server reads what is left of a body
		// before it answers, and would wait on this client again
		writeJSON(w, http.StatusBadRequest, errorBody{Kind: kindError, Message: fmt.Sprintf("daemon: bad request: reading it: %v", err)})
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{Kind: kindError, Message: fmt.Sprintf("daemon: bad request: %v", err)})
		return
	}
	res, err := m.serve(r.Context(), s.api, req)
	if err != nil {
		status, body := toWire(err)
		if body.Kind == kindError {
			// The caller sees the message; the daemon's log is the only
			// place its operator does.
			s.log.Warn("call failed", "method", r.URL.Path, "err", err)
		}
		writeJSON(w, status, body)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// writeJSON marshals before writing, so a value that cannot be encoded
// becomes an error answer instead of half a body under status 200.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(errorBody{Kind: kindError, Message: fmt.Sprintf("daemon: encoding the answer: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// subscribe streams the engine's notifications as JSON lines until the
// client goes away (the request's context ends when its connection closes),
// the engine closes the channel, or the server stops. The engine drops
// notifications for a subscriber that lags, so a stalled client never holds
// the engine up.
//
// With screen=1 it is SubscribeScreen's stream: the client is a screen a
// person watches, and what is meant for the person counts as delivered
// once the engine hands it to this stream. (A daemon older than the
// client ignores the parameter: the screen gets no toasts, and nothing is
// claimed delivered to it.)
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	subscribe := s.api.Subscribe
	if r.URL.Query().Get(screenParam) == "1" {
		subscribe = s.api.SubscribeScreen
	}
	ch, cancel := subscribe()
	defer cancel()
	// Each write may wait for the reader streamWriteTimeout, and none past
	// the server's stop: a write stuck on a reader that stopped reading
	// never sees quit, so quit ends the wait itself. The deadline is
	// lifted on the way out unless the server stops, for the client may
	// send its next call on this connection.
	var mu sync.Mutex
	stopped := false // under mu: quit has set the deadline to now
	stopping := make(chan struct{})
	unblocked := make(chan struct{})
	go func() {
		defer close(unblocked)
		select {
		case <-s.quit:
			mu.Lock()
			stopped = true
			_ = rc.SetWriteDeadline(time.Now())
			mu.Unlock()
		case <-stopping:
		}
	}()
	defer func() {
		close(stopping)
		<-unblocked
		if !stopped {
			_ = rc.SetWriteDeadline(time.Time{})
		}
	}()
	write := func(flush func() error) error {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return http.ErrServerClosed
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		mu.Unlock()
		return flush()
	}
	// The headers go out only once the engine subscription exists, so a
	// client whose Subscribe has returned misses nothing after it.
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	if err := write(rc.Flush); err != nil {
		return
	}
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		case n, ok := <-ch:
			if !ok {
				return
			}
			if err := write(func() error {
				if err := enc.Encode(n); err != nil {
					return err
				}
				return rc.Flush()
			}); err != nil {
				return
			}
		}
	}
}
