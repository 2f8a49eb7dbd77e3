package clitest

import (
	"net"
	"testing"
	"time"

	"keep/engine/daemon"
)

// TestAHalfSentCallDoesNotSpoilTheDaemonsStop: a client that froze or died
// half way through sending a call (its headers sent, its body not) does
// not hold a daemon told to stop: it exits 0, as SIGTERM asks, and soon,
// not after its whole grace period with an error a service manager reads
// as a failure.
func TestAHalfSentCallDoesNotSpoilTheDaemonsStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	d := startDaemon(t, e)
	awaitSocket(t, e, d, time.Minute)
	conn, err := net.Dial("unix", daemon.SocketPath(e.db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("POST /v1/approve HTTP/1.1\r\nHost: keep\r\nContent-Length: 100\r\n\r\n{\"mutation_id\":")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the daemon is reading the body
	// stop fails unless it exits 0: a stop past its grace exits 1
	d.stop(t)
}
