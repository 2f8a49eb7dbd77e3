package reference_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"keep/workflows"
)

// TestGuideCoversWhatAnAuthorNeeds: the authoring guide has its topics and
// a worked example for every registered connector, so a connector merged
// in later fails here until it has one.
func TestGuideCoversWhatAnAuthorNeeds(t *testing.T) {
	guide := workflows.Guide()
	for _, topic := range []string{"## The three phases, and why", "## Inputs and their titles", "## A good messageId",
		"## Reservations", "## Approvals and grants", "## wakeAt", "## Testing a workflow", "keep try", "keep validate"} {
		if !strings.Contains(guide, topic) {
			t.Errorf("the guide lacks %q", topic)
		}
	}
	reg := defaultRegistry(t)
	names := map[string][]string{} // connector → the names ctx offers it under
	for _, n := range reg.Names() {
		c, _ := reg.Get(n)
		names[c.Name()] = append(names[c.Name()], n)
	}
	for conn, under := range names {
		if !strings.Contains(guide, "**"+conn) {
			t.Errorf("the guide has no section for connector %s", conn)
		}
		used := false
		for _, n := range under {
			used = used || strings.Contains(guide, "ctx."+n+".")
		}
		if !used {
			t.Errorf("the guide has no worked example calling connector %s (as %s)", conn, strings.Join(under, " or "))
		}
	}
}

// TestReadmeLinksStayInTheRepository: the README points at nothing outside
// the repository, and every relative link resolves.
func TestReadmeLinksStayInTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, name := range []string{"README.md", filepath.Join("workflows", "README.md")} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, bad := range []string{"../", "shared/spec", "DESIGN.md"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s mentions %q, outside the repository", name, bad)
			}
		}
		for _, m := range regexp.MustCompile(`\]\(([^)#]+)`).FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(name), target)); err != nil {
				t.Errorf("%s links %s, which is not in the repository", name, target)
			}
		}
	}
}
