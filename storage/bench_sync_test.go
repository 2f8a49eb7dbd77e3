package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSyncCost is the CPU a durable commit's sync costs on this
// machine's disk, by the log pages written before it: frames of keep's page
// size written in place over a log already as long as a checkpointed one,
// then syncFile, as the writer does. The kernel's share (the writeback the
// sync starts) counts: it is the process's CPU, not the wait.
//
//	go test ./storage -run XXX -bench SyncCost -benchtime 300x
func BenchmarkSyncCost(b *testing.B) {
	path := filepath.Join(b.TempDir(), "log")
	const frame = pageSize + 24 // a WAL frame: its header and the page
	size := int64(checkpointPages * frame)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, size), 0); err != nil {
		b.Fatal(err)
	}
	if err := syncFile(path); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, frame)
	for _, pages := range []int{0, 1, 14, 28} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			var off int64
			cpu := cpuTime(b)
			b.ResetTimer()
			for range b.N {
				for range pages {
					if _, err := f.WriteAt(buf, off); err != nil {
						b.Fatal(err)
					}
					off = (off + frame) % size
				}
				if err := syncFile(path); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/sync")
		})
	}
}
