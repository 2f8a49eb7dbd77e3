package benchmark

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFilesPostSyscalls counts keep's system calls over one files→http
// round, by kind, per item, the daemon's apart from its workers': `perf
// record` of the syscall-entry tracepoint attached to the daemon and its
// workers inside the round's window (workers started later are followed),
// written to $KEEP_BENCH_SYSCALLS and read back into a table in the log:
//
//	KEEP_BENCH_SYSCALLS=/tmp/keep.sys go test ./engine/benchmark -run TestFilesPostSyscalls -v
//
// perf needs root here (perf_event_paranoid). A tracepoint costs little
// next to strace, which slows keep several times over and so changes what
// is timed (the Go runtime's sleeps scale with the wall time). The daemon's
// stop after the last POST is in the count.
func TestFilesPostSyscalls(t *testing.T) {
	out := os.Getenv("KEEP_BENCH_SYSCALLS")
	if out == "" {
		t.Skip("set KEEP_BENCH_SYSCALLS=PATH to count keep's system calls over a files→http round")
	}
	const items = 1000
	var perf *exec.Cmd
	var daemon int
	attach := func(pid int) {
		daemon = pid
		pids := []string{strconv.Itoa(pid)}
		for _, c := range childPIDs(pid) {
			pids = append(pids, strconv.Itoa(c))
		}
		perf = exec.Command("perf", "record", "-e", "raw_syscalls:sys_enter", "-o", out, "-p", strings.Join(pids, ","))
		perf.Stdout, perf.Stderr = os.Stderr, os.Stderr
		if err := perf.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // attached before the drop
	}
	_, err := FilesPost(context.Background(), Options{Dir: t.TempDir(), FilesPostItems: items, NodeRed: "/nonexistent/node-red",
		DaemonBinary: keepBin, Logf: t.Logf, roundHook: attach})
	if perf != nil {
		perf.Wait() // perf ends with the daemon it follows
	}
	if err != nil {
		t.Fatal(err)
	}
	script, err := exec.Command("perf", "script", "-i", out, "-F", "pid,trace").Output()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[2]string]int{} // {daemon|workers, syscall} → calls
	total := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(script))
	for sc.Scan() {
		// "  1234 NR 35 (...)"
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[1] != "NR" {
			continue
		}
		who := "workers"
		if f[0] == strconv.Itoa(daemon) {
			who = "daemon"
		}
		nr, _ := strconv.Atoi(f[2])
		counts[[2]string{who, syscallName(nr)}]++
		total[who]++
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b [2]string) int { return cmp.Compare(counts[b], counts[a]) })
	var b strings.Builder
	fmt.Fprintf(&b, "system calls per item over %d items: daemon %.1f, workers %.1f\n", items,
		float64(total["daemon"])/items, float64(total["workers"])/items)
	for _, k := range keys {
		if c := counts[k]; c >= items/10 {
			fmt.Fprintf(&b, "  %-8s %-16s %6.2f\n", k[0], k[1], float64(c)/items)
		}
	}
	t.Log(b.String())
}

// syscallName names the calls keep makes in a round (amd64 numbers; others
// by number).
func syscallName(nr int) string {
	names := map[int]string{
		syscall.SYS_READ: "read", syscall.SYS_WRITE: "write", syscall.SYS_PREAD64: "pread64", syscall.SYS_PWRITE64: "pwrite64",
		syscall.SYS_FDATASYNC: "fdatasync", syscall.SYS_FSYNC: "fsync", syscall.SYS_FCNTL: "fcntl", syscall.SYS_FUTEX: "futex",
		syscall.SYS_NANOSLEEP: "nanosleep", syscall.SYS_EPOLL_PWAIT: "epoll_pwait", syscall.SYS_EPOLL_CTL: "epoll_ctl",
		syscall.SYS_OPENAT: "openat", syscall.SYS_CLOSE: "close", syscall.SYS_NEWFSTATAT: "newfstatat", syscall.SYS_FSTAT: "fstat",
		syscall.SYS_GETDENTS64: "getdents64", syscall.SYS_MMAP: "mmap", syscall.SYS_MUNMAP: "munmap", syscall.SYS_MADVISE: "madvise",
		syscall.SYS_SCHED_YIELD: "sched_yield", syscall.SYS_RT_SIGRETURN: "rt_sigreturn", syscall.SYS_TGKILL: "tgkill",
		syscall.SYS_GETPID: "getpid", syscall.SYS_CONNECT: "connect", syscall.SYS_ACCEPT4: "accept4", syscall.SYS_SOCKET: "socket",
		syscall.SYS_SETSOCKOPT: "setsockopt", syscall.SYS_UNLINK: "unlink", syscall.SYS_RENAME: "rename",
		syscall.SYS_INOTIFY_ADD_WATCH: "inotify_add_watch", syscall.SYS_LSEEK: "lseek", syscall.SYS_FTRUNCATE: "ftruncate",
		syscall.SYS_RT_SIGPROCMASK: "rt_sigprocmask", syscall.SYS_RT_SIGACTION: "rt_sigaction", syscall.SYS_CLONE: "clone",
		syscall.SYS_ACCESS: "access", syscall.SYS_STAT: "stat", syscall.SYS_LSTAT: "lstat", syscall.SYS_OPEN: "open",
		syscall.SYS_PRCTL: "prctl", syscall.SYS_SIGALTSTACK: "sigaltstack",
	}
	if n, ok := names[nr]; ok {
		return n
	}
	return "NR " + strconv.Itoa(nr)
}
