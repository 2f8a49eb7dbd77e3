package benchmark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuSeconds is the user+system CPU time keep has used so far: this
// process's, its children's that have ended and been waited for, and its
// live children's — the script workers, which live across runs, so the
// process's own rusage never sees them. A difference of two readings is
// what keep spent between them, whichever workers started or ended in
// between (an ended worker's time moves from the live sum to the waited
// one).
func cpuSeconds() float64 {
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return 0
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		return 0
	}
	t := time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
	return t.Seconds() + float64(liveChildrenTicks(os.Getpid()))/clockTicks
}

// liveChildrenTicks sums the CPU ticks of the processes whose parent is
// ppid (none where there is no /proc). A child that ends between the
// listing and its read is skipped: it is waited for, and counted by
// RUSAGE_CHILDREN, by the next reading.
func liveChildrenTicks(ppid int) int64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if parent, t, err := procStat(pid); err == nil && parent == ppid {
			ticks += t
		}
	}
	return ticks
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime:
// 100 on every Linux architecture keep builds for.
const clockTicks = 100

// cpuTicks is a process's utime + stime.
func cpuTicks(pid int) (int64, error) {
	_, t, err := procStat(pid)
	return t, err
}

// procStat reads a process's parent and its utime + stime (fields 4, 14
// and 15 of /proc/PID/stat, counted after the parenthesised command name,
// which may hold spaces and parentheses itself).
func procStat(pid int) (ppid int, ticks int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	ppid, err0 := strconv.Atoi(f[1])
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err0, err1, err2); err != nil {
		return 0, 0, err
	}
	return ppid, utime + stime, nil
}
