package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// WriteDefault writes a config file with every default (keep init): mode
// 0600, its folder made if missing, never over a file already there.
func WriteDefault(path string) error {
	var b strings.Builder
	b.WriteString("# keep configuration (README.md, Configuration, says what each key does). Every value below is the default;\n")
	b.WriteString("# delete what you do not change. Durations are Go durations (\"30s\", \"5m\", \"1h\").\n\n")
	if err := toml.NewEncoder(&b).Encode(Default()); err != nil {
		return fmt.Errorf("config: encoding the defaults: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
