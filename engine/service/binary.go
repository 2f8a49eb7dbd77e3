package service

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// CheckBinary refuses a binary the service would lose: one `go run` built,
// which lives in the Go build cache (goCache; empty: $GOCACHE, else the
// default) or in a go-build* temporary folder, and which Go deletes when it
// trims the cache.
func CheckBinary(bin, goCache string) error {
	if goCache == "" {
		goCache = os.Getenv("GOCACHE")
	}
	if goCache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			goCache = filepath.Join(dir, "go-build")
		}
	}
	under := false
	if goCache != "" && goCache != "off" {
		if rel, err := filepath.Rel(goCache, bin); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			under = true
		}
	}
	for _, part := range strings.Split(filepath.Dir(bin), string(filepath.Separator)) {
		// go run's work folder: go-build and digits
		n, ok := strings.CutPrefix(part, "go-build")
		under = under || ok && n != "" && strings.Trim(n, "0123456789") == ""
	}
	if under {
		return fmt.Errorf("%s was built by go run into the Go build cache, which Go may empty at any time; "+
			"install keep first (go install, in keep's source folder: it lands in $(go env GOBIN), or $(go env GOPATH)/bin when GOBIN is empty), "+
			"then run that keep service install", bin)
	}
	return nil
}

// Env is what the service needs from the environment of the person
// installing it: variables a config's *_env keys name.
type Env struct {
	// Needed: a configured connector reads its secret from it.
	Needed []string
	// Optional: named, but nothing configured reads it now.
	Optional []string
}

// Carry splits e's variables into those set in the environment (lookup;
// default os.LookupEnv), which the service gets, and the needed ones that
// are not set, which make installing pointless. Optional variables that are
// not set are left out.
func (e Env) Carry(lookup func(string) (string, bool)) (carry map[string]string, missing []string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	carry = map[string]string{}
	for _, name := range e.Needed {
		if v, ok := lookup(name); ok && v != "" {
			carry[name] = v
		} else if !contains(missing, name) {
			missing = append(missing, name)
		}
	}
	for _, name := range e.Optional {
		if v, ok := lookup(name); ok && v != "" {
			carry[name] = v
		}
	}
	return carry, missing
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// envFile is the variables as systemd's EnvironmentFile reads them: one
// KEY="value" a line, with backslash and double quote escaped.
func envFile(env map[string]string) (string, error) {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		if strings.ContainsAny(v, "\n\r") {
			return "", fmt.Errorf("service: the value of %s holds a line break, which a service's environment cannot carry", k)
		}
		b.WriteString(k + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + "\"\n")
	}
	return b.String(), nil
}

// Version is the module version and VCS revision a binary was built from,
// said honestly when Go recorded none: "(devel)" and "unknown". modified:
// the working tree had changes the revision does not hold.
func Version(bi *debug.BuildInfo) (version, revision string, modified bool) {
	version, revision = "(devel)", "unknown"
	if bi == nil {
		return version, revision, false
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				revision = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return version, revision, modified
}
