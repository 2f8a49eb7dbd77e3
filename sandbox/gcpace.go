package sandbox

import (
	"runtime/debug"
	"runtime/metrics"
)

// workerMemLimit is a worker's own soft memory limit (set at its start, 0
// where GOMEMLIMIT is given); a phase's may only be lower.
var workerMemLimit int64

// paceFor has a worker's collector run before a phase's garbage alone could
// pass the phase's heap limit (Limits.MaxHeapGrowth). The heap watchdog
// counts objects not yet collected, and a worker collects late (GOGC 300):
// a script churning temporaries over a live set of tens of MiB was stopped
// for growth it did not keep. The soft limit is what the process holds now
// plus half the allowance, so garbage is collected well before the
// watchdog's line; what a script keeps still passes it and meets the
// watchdog.
func paceFor(growth uint64) {
	if growth == 0 || workerMemLimit == 0 {
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return
	}
	held := s[0].Value.Uint64() - s[1].Value.Uint64()
	debug.SetMemoryLimit(min(int64(held+growth/2), workerMemLimit))
}
