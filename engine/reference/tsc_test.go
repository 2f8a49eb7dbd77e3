package reference_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"keep/engine/reference"
	"keep/workflows"
)

// tsc finds TypeScript's compiler: the one .ci/servers/typescript.sh
// installs, else it installs it there itself with npm. Without npm the test
// skips, or fails under CI=true.
func tsc(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KEEP_TSC_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "keep", "typescript")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npm is missing: run .ci/servers/typescript.sh")
		}
		t.Skip("npm is missing, so TypeScript cannot be installed (.ci/servers/typescript.sh)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "typescript@5").CombinedOutput()
	if err != nil {
		t.Fatalf("npm install typescript: %v\n%s", err, out)
	}
	return bin
}

// project writes keep.d.ts and jsconfig.json as keep init does, and files.
func project(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	files["keep.d.ts"] = []byte(reference.Build(defaultRegistry(t)).DTS())
	files["jsconfig.json"] = []byte(reference.JSConfig)
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runTSC(t *testing.T, bin, dir string) (string, error) {
	cmd := exec.Command(bin, "--noEmit", "-p", filepath.Join(dir, "jsconfig.json"), "--pretty", "false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestExampleWorkflowsTypeCheck(t *testing.T) {
	bin := tsc(t)
	files := map[string][]byte{}
	for _, wf := range workflows.All() {
		if !bytes.HasPrefix(wf.Source, []byte("// @ts-check\n")) {
			t.Errorf("%s does not start with // @ts-check", wf.Name)
		}
		files[wf.Name] = wf.Source
	}
	// and the whole file keep help api shows
	files["reference-file.js"] = []byte("// @ts-check\n" + reference.FileExample)
	dir := project(t, files)
	if out, err := runTSC(t, bin, dir); err != nil {
		t.Fatalf("tsc --noEmit: %v\n%s", err, out)
	}
}

// TestTypesCatchPhaseAndArgumentMistakes proves the declarations are not
// "any": a read in mutate, a mutation in prepare, a missing argument, a
// wrong argument type and a misspelt method are each an error.
func TestTypesCatchPhaseAndArgumentMistakes(t *testing.T) {
	bin := tsc(t)
	bad := `// @ts-check
export default Keep.workflow({
  name: "bad",
  topics: { t: {} },
  producers: {
    p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
      await ctx.files.lsit({ dir: "x" });
      await ctx.files.read({});
      await ctx.peek("t");
    } },
  },
  consumers: {
    c: Keep.consumer({
      subscribe: ["t"],
      async prepare(ctx) { await ctx.files.write({ path: "a", content: "b" }); return { reservations: [], data: {} }; },
      async mutate(ctx, prepared) { await ctx.files.list({ dir: 1 }); },
      async next(ctx, prepared, r) { if (r.status === "applied") return r.result; },
    }),
  },
});
`
	dir := project(t, map[string][]byte{"bad.js": []byte(bad)})
	out, err := runTSC(t, bin, dir)
	if err == nil {
		t.Fatalf("tsc accepted a script full of mistakes:\n%s", out)
	}
	for _, want := range []string{
		"bad.js(7,",  // lsit
		"bad.js(8,",  // read without path
		"bad.js(9,",  // peek in a producer
		"bad.js(15,", // write in prepare
		"bad.js(16,", // list in mutate
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tsc did not flag %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "keep.d.ts") {
		t.Errorf("keep.d.ts itself has errors:\n%s", out)
	}
}
