package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// maxSunPath is the longest socket path the system takes: sun_path holds
// 108 bytes with the NUL on Linux, 104 on macOS and the BSDs.
var maxSunPath = func() int {
	if runtime.GOOS == "linux" {
		return 107
	}
	return 103
}()

// shortAddr gives the address to bind or connect a unix socket at path by,
// and a release to call once that is done. A path too long for sun_path
// (a deep data directory) is reached through a descriptor of its directory,
// as /proc/self/fd/N/NAME: the same directory, resolved inside this
// process, so it reaches the same socket and no other. Where that is not
// available the path is given back as it is, and binding it fails with the
// system's error.
func shortAddr(path string) (string, func()) {
	if len(path) <= maxSunPath {
		return path, func() {}
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return path, func() {}
	}
	short := "/proc/self/fd/" + strconv.FormatUint(uint64(dir.Fd()), 10) + "/" + filepath.Base(path)
	if _, err := os.Stat(filepath.Dir(short)); err != nil || len(short) > maxSunPath {
		dir.Close()
		return path, func() {}
	}
	return short, func() { dir.Close() }
}

// reachable says whether a socket at path can be bound and connected to.
func reachable(path string) bool {
	addr, release := shortAddr(path)
	release()
	return len(addr) <= maxSunPath
}

// dialUnix connects to the socket at path, however long the path.
func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	addr, release := shortAddr(path)
	defer release()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", addr)
	return conn, named(err, path)
}

// listenUnix binds a socket at path, however long the path.
func listenUnix(ctx context.Context, path string) (net.Listener, error) {
	addr, release := shortAddr(path)
	defer release()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", addr)
	return ln, named(err, path)
}

// named gives a socket's error the path the user knows, not the
// /proc/self/fd address it was reached by.
func named(err error, path string) error {
	if op, ok := err.(*net.OpError); ok {
		op.Addr = &net.UnixAddr{Name: path, Net: "unix"}
	}
	return err
}
