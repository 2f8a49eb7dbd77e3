//go:build !linux

package storage

import "os"

// logFile is the log opened for its syncs, once (durability.fsync).
type logFile struct{ f *os.File }

func openLog(path string) (*logFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &logFile{f: f}, nil
}

func (f *logFile) sync() error  { return f.f.Sync() }
func (f *logFile) close() error { return f.f.Close() }

// syncFile flushes the file at path (openLog, sync, close).
func syncFile(path string) error {
	f, err := openLog(path)
	if err != nil {
		return err
	}
	err = f.sync()
	if cerr := f.close(); err == nil {
		err = cerr
	}
	return err
}
