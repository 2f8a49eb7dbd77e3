package mcp

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// A stdio server is someone else's code: keep's secrets stay out of its
// environment, what it needs to start and reach the network goes in.
func TestServerEnvKeepsSecretsOut(t *testing.T) {
	got := serverEnv([]string{"PATH=/usr/bin", "HOME=/home/me", "KEEP_MAIL_PASSWORD=hunter2",
		"KEEP_LLM_API_KEY=sk-1", "GITHUB_TOKEN=ghp_x", "HTTPS_PROXY=http://proxy:3128", "LC_ALL=C.UTF-8", "AWS_SECRET_ACCESS_KEY=a"})
	want := []string{"PATH=/usr/bin", "HOME=/home/me", "HTTPS_PROXY=http://proxy:3128", "LC_ALL=C.UTF-8"}
	if !slices.Equal(got, want) {
		t.Fatalf("serverEnv = %v, want %v", got, want)
	}
}

// The README's example servers name the version the tests ran, so a
// server's new release does not change a workflow's tools under it.
func TestReadmePinsServerVersions(t *testing.T) {
	for _, p := range []string{"../../README.md", "../../workflows/mcp/notes-to-memory.js"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(@modelcontextprotocol/[a-z-]+)(@[^"]*)?"`).FindAllStringSubmatch(string(b), -1) {
			if m[2] == "" {
				t.Errorf("%s: %s has no pinned version (@VERSION)", p, m[1])
			}
		}
	}
}
