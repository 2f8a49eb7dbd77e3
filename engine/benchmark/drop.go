package benchmark

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Drop is the files→http job's batch of files: written beside the folder
// first (Stage), then dropped in by renaming them (Drop), as a batch moved
// in arrives — writing 1,000 files took this file system 0.2–1.0 s, time
// a drop's timing would charge to whoever reads the folder. Node-RED's
// side of the comparison (testdata/nodered) drops the same way.
type Drop struct {
	Names   []string
	Start   time.Time            // when the first rename began
	Dropped map[string]time.Time // when each file was in the folder
	Took    time.Duration        // the first rename's start to the last's end
}

// Stage writes n small JSON files into staging.
func Stage(staging string, n int) (*Drop, error) {
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, err
	}
	d := &Drop{Names: make([]string, n)}
	for i := range d.Names {
		d.Names[i] = fmt.Sprintf("item-%05d.json", i)
		if err := os.WriteFile(filepath.Join(staging, d.Names[i]), fmt.Appendf(nil, `{"n":%d}`, i), 0o600); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Drop renames the staged files into inbox, one after another, noting
// when each arrived.
func (d *Drop) Drop(staging, inbox string) error {
	d.Dropped = make(map[string]time.Time, len(d.Names))
	d.Start = time.Now()
	for _, name := range d.Names {
		if err := os.Rename(filepath.Join(staging, name), filepath.Join(inbox, name)); err != nil {
			return err
		}
		d.Dropped[name] = time.Now()
	}
	d.Took = time.Since(d.Start)
	return nil
}
