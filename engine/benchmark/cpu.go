package benchmark

import (
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

// liveChildrenTicks sums the CPU ticks of the live children of ppid. A
// child that ends between the listing and its read is skipped: it is
// waited for, and counted by its parent's waited-for children, by the
// next reading.
func liveChildrenTicks(ppid int) int64 {
	var ticks int64
	for _, pid := range childPIDs(ppid) {
		if _, own, waited, err := procStat(pid); err == nil {
			ticks += own + waited
		}
	}
	return ticks
}

// childPIDs lists the processes whose parent is ppid (none where there is
// no /proc).
func childPIDs(ppid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if parent, _, _, err := procStat(pid); err == nil && parent == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime:
// 100 on every Linux architecture keep builds for.
const clockTicks = 100

// treeTicks is the CPU ticks a process has used with its children: its
// own, its waited-for children's, and its live children's (keep's daemon
// and its script workers; Node-RED's process, which has none).
func treeTicks(pid int) (int64, error) {
	_, own, waited, err := procStat(pid)
	return own + waited + liveChildrenTicks(pid), err
}

// procStat reads a process's parent, its utime + stime, and its waited-for
// children's cutime + cstime (fields 4, 14 to 17 of /proc/PID/stat, counted
// after the parenthesised command name, which may hold spaces and
// parentheses itself).
func procStat(pid int) (ppid int, ticks, children int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	var n [5]int64
	for k, j := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		n[k] = v
	}
	return int(n[0]), n[1] + n[2], n[3] + n[4], nil
}
