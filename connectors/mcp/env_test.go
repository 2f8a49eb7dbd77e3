package mcp

import (
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
