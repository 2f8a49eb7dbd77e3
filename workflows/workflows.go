// Package workflows holds the example workflow files that ship with keep:
// `keep init` writes them next to a new config, and the TUI's first-run demo
// deploys demo.js. Each file is written the way chapter 06a teaches (inputs
// with recognizable titles and stable external ids, producers with cursors,
// consumers in prepare → mutate → next with a ui.title for every mutation),
// and each has a test that runs it on a real engine.
package workflows

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.js
var files embed.FS

// File is one embedded workflow file.
type File struct {
	Name   string // file name, e.g. "demo.js"
	Source []byte
}

// All returns every example workflow, sorted by name. Each call returns
// fresh copies, so a caller may change them.
func All() []File {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic("workflows: " + err.Error()) // the embedded FS is fixed at build time
	}
	out := make([]File, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		f, ok := Get(e.Name())
		if ok {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the example workflow with this file name ("demo.js").
func Get(name string) (File, bool) {
	src, err := files.ReadFile(name)
	if err != nil {
		return File{}, false
	}
	return File{Name: name, Source: src}, true
}

//go:embed README.md
var guide string

// Guide is the authoring guide (README.md of this folder): what `keep new`
// and `keep edit` give a model besides the reference.
func Guide() string { return guide }
