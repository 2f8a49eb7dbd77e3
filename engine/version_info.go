package engine

import (
	"context"
	"os"
	"runtime/debug"
)

// VersionInfo is `keep version`: what this binary is and which schema it
// writes, and the schema of the database it points at, if there is one.
type VersionInfo struct {
	Version         string `json:"version"`
	Commit          string `json:"commit"`
	Modified        bool   `json:"modified,omitempty"`
	GoVersion       string `json:"go_version"`
	SchemaVersion   int    `json:"schema_version"`
	Database        string `json:"database"`
	DatabaseVersion int    `json:"database_schema_version,omitempty"`
	DatabaseError   string `json:"database_error,omitempty"`
}

// VersionOf is what keep version says: of the binary (bi; version, when
// set at build time, over the module's), and of the database at dbPath.
func VersionOf(ctx context.Context, bi *debug.BuildInfo, version, dbPath string) VersionInfo {
	v := VersionInfo{SchemaVersion: SchemaVersion(), Database: dbPath}
	v.Version, v.Commit, v.Modified = BuildVersion(bi)
	if bi != nil {
		v.GoVersion = bi.GoVersion
	}
	if version != "" {
		v.Version = version
	}
	if _, err := os.Stat(dbPath); err == nil {
		if n, err := FileVersion(ctx, dbPath); err != nil {
			v.DatabaseError = err.Error()
		} else {
			v.DatabaseVersion = n
		}
	}
	return v
}
