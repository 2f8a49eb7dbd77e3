// Command nodered measures Node-RED alone on keep bench's files→http job:
// n files renamed into a folder at once, one POST each to a sink in this
// process that answers after a fixed delay (benchmark.NodeRedRound, which
// `keep bench` also runs beside keep when it finds Node-RED). It prints
// items/s, the drop-to-POST p50 and p99, Node-RED's CPU-seconds per 1,000
// items and its peak RSS.
//
//	npm install --prefix /tmp/nr node-red@4.1
//	go run ./engine/benchmark/testdata/nodered -node-red /tmp/nr/node_modules/.bin/node-red -flow poll
//
// It is not part of the test suite: it needs Node.js and Node-RED.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"keep/engine/benchmark"
)

func main() {
	bin := flag.String("node-red", "node-red", "the node-red command")
	flow := flag.String("flow", "watch", "watch (a folder watch) or poll (list every 200 ms, move after a 2xx)")
	n := flag.Int("n", 1000, "files dropped at once")
	delay := flag.Duration("delay", time.Millisecond, "how long the sink waits before answering")
	flag.Parse()
	if err := run(*bin, *flow, *n, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "nodered:", err)
		os.Exit(1)
	}
}

func run(bin, flow string, n int, delay time.Duration) error {
	dir, err := os.MkdirTemp("", "nodered-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := benchmark.NodeRedRound(context.Background(), dir, bin, flow, n, delay)
	if err != nil {
		return err
	}
	fmt.Printf("node-red %s: %d files, %.1f items/s, p50 %.0f ms, p99 %.0f ms, %.2f CPU-s per 1,000, peak RSS %.1f MB (sink delay %s)\n",
		flow, n, f.ItemsPerS, f.Lat[len(f.Lat)/2], f.Lat[len(f.Lat)*99/100], f.CPUPer1000, f.PeakRSSMB, delay)
	return nil
}
