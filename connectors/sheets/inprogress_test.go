package sheets

import (
	"context"
	"fmt"
	"os"
	"testing"

	"keep/connectors"
	"keep/connectors/files"
)

// TestAWriteInProgressIsNotListed: the files and sheets roots are the same
// folder by default (~/Keep), and a sheet is written to a temporary file
// beside it before the rename. A files.list of the folder then, which a
// watched folder's producer makes as soon as the temporary file appears,
// must not hand it on: a consumer would read half a sheet, or find the
// name gone.
func TestAWriteInProgressIsNotListed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fc, err := files.New(files.Config{Roots: []string{b.root}})
	if err != nil {
		t.Fatal(err)
	}
	b.write(t, "a.csv", "x\n1\n")
	var listed []any
	rename := b.c.ops.rename
	b.c.ops.rename = func(dir *os.File, from, to string) error {
		got, err := fc.Do(context.Background(), connectors.Call{Method: "list", Params: map[string]any{"dir": "."}})
		if err != nil {
			t.Errorf("list: %v", err)
		}
		listed, _ = got.([]any)
		return rename(dir, from, to)
	}
	b.mustDo(t, "appendRow", "k1", with(sheet("a.csv"), "values", []any{"2"}))
	if len(listed) != 1 || listed[0].(map[string]any)["name"] != "a.csv" {
		t.Fatalf("listed while the sheet was written: %v", fmt.Sprint(listed))
	}
}
