package sheets

import (
	"os"
	"path/filepath"
	"strings"

	"keep/connectors"
)

// location is one sheet, resolved.
type location struct {
	file   string  // the CSV file to read and write, symlinks resolved
	root   string  // the real root file is in: file is used by walking from it (connectors.OpenBeneath)
	label  string  // what people see: the spreadsheet relative to its root, plus the sheet
	google *gsheet // set instead of file for a tab of a Google spreadsheet
}

// locate resolves the spreadsheet and sheet params to a file inside a root.
func (c *Connector) locate(params map[string]any) (location, error) {
	spreadsheet, err := connectors.String(params, "spreadsheet", true)
	if err != nil {
		return location{}, err
	}
	sheet, err := connectors.String(params, "sheet", false)
	if err != nil {
		return location{}, err
	}
	if strings.HasPrefix(spreadsheet, googlePrefix) {
		return c.locateGoogle(spreadsheet, sheet)
	}
	abs, rel, err := c.inRoot(spreadsheet)
	if err != nil {
		return location{}, err
	}
	file, label := abs, rel
	if sheet != "" {
		sheet = strings.TrimSuffix(sheet, ".csv")
		if sheet == "" || sheet == "." || sheet == ".." || strings.ContainsAny(sheet, `/\`+"\x00") {
			return location{}, connectors.Errorf(connectors.Logic, "sheet %q is not a sheet name", sheet)
		}
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return location{}, connectors.Errorf(connectors.Logic,
				"%s is a CSV file, which holds one sheet: leave out sheet, or name a directory of sheets", rel)
		}
		file = filepath.Join(abs, sheet+".csv")
		label = rel + "/" + sheet
	} else if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return location{}, connectors.Errorf(connectors.Logic,
			"%s is a directory of sheets: name one with sheet", rel)
	}
	real, root, err := c.realInRoot(file)
	if err != nil {
		return location{}, err
	}
	if err := c.protected.Check(file); err != nil {
		return location{}, err
	}
	return location{file: real, root: root, label: label}, nil
}

// inRoot makes p absolute (relative paths are taken from the first root) and
// checks lexically that it lies inside a root. It returns the path relative
// to that root, with forward slashes, for scopes and messages.
func (c *Connector) inRoot(p string) (abs, rel string, err error) {
	p, err = expandHome(p)
	if err != nil {
		return "", "", connectors.Errorf(connectors.Logic, "spreadsheet %q: %w", p, err)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.roots[0], p)
	}
	abs = filepath.Clean(p)
	for _, root := range c.roots {
		if r, ok := under(root, abs); ok {
			return abs, r, nil
		}
	}
	return "", "", connectors.Errorf(connectors.Permission, "%s is outside the sheets roots (%s)", abs, strings.Join(c.roots, ", "))
}

// realInRoot resolves symlinks in p and checks again that the result lies in
// a root, so a link inside a root can't lead a write outside it. The real
// root comes back too: the file is then used only by walking to it from
// there, so a link put on the way after this check leads nowhere.
func (c *Connector) realInRoot(p string) (real, root string, err error) {
	real, err = connectors.RealPath(p)
	if err != nil {
		return "", "", classifyIO("resolve "+p, err)
	}
	for _, root := range c.roots {
		realRoot, err := connectors.RealPath(root)
		if err != nil {
			continue
		}
		if _, ok := under(realRoot, real); ok {
			return real, realRoot, nil
		}
	}
	return "", "", connectors.Errorf(connectors.Permission, "%s leads outside the sheets roots through a symbolic link", p)
}

// under reports whether p is root or inside it, and p relative to root.
func under(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// scope is the spreadsheet path relative to its root: what a grant narrows
// appendRow and updateRow to. It is lexical (no file system access), so the
// same params always give the same scope.
func (c *Connector) scope(params map[string]any) string {
	s, _ := params["spreadsheet"].(string)
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, googlePrefix) {
		id, _, _ := strings.Cut(strings.TrimPrefix(s, googlePrefix), "/")
		return googlePrefix + id
	}
	_, rel, err := c.inRoot(s)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(s))
	}
	return rel
}
