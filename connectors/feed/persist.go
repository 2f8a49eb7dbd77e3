package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// saved is one URL's file in Config.Dir.
type saved struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Items        []any  `json:"items"`
}

func (c *Connector) fileFor(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json")
}

// load reads what an earlier process kept for url; nil when nothing (or
// something unreadable: the next fetch is then a full one, as on a first
// run).
func (c *Connector) load(url string) *validators {
	if c.dir == "" {
		return nil
	}
	data, err := os.ReadFile(c.fileFor(url))
	if err != nil {
		return nil
	}
	var s saved
	if json.Unmarshal(data, &s) != nil || s.URL != url || (s.ETag == "" && s.LastModified == "") {
		return nil
	}
	if s.Items == nil {
		s.Items = []any{}
	}
	return &validators{etag: s.ETag, lastModified: s.LastModified, items: s.Items}
}

// save keeps v for url in Config.Dir, or removes the file when v has no
// validators. A failure costs one full fetch after a restart, so it is
// not the call's failure.
func (c *Connector) save(url string, v *validators) {
	if c.dir == "" {
		return
	}
	path := c.fileFor(url)
	if v.etag == "" && v.lastModified == "" {
		os.Remove(path)
		return
	}
	data, err := json.Marshal(saved{URL: url, ETag: v.etag, LastModified: v.lastModified, Items: v.items})
	if err != nil || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".feed-*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
