package engine

import (
	"strconv"
	"strings"
)

func itoa(n int) string { return strconv.Itoa(n) }

func idString(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// parseID reads an id given by a person or a front end ("42").
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, notFoundf("%s id %q is not a number", what, s)
	}
	return id, nil
}
