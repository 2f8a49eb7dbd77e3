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

// parseAnswerID reads the mutation an answer is to: "42", the mutation as
// it is asked about now, or "42@2", the mutation as its attempt 2 was
// asked about (api.AttentionItem.AnswerID), so that an answer given to an
// earlier question of the same row is refused, not applied to this one.
// attempt is 0 when the id names none.
func parseAnswerID(s string) (id int64, attempt int, err error) {
	s = strings.TrimSpace(s)
	at, n, named := strings.Cut(s, "@")
	if id, err = parseID("mutation", at); err != nil {
		return 0, 0, err
	}
	if named {
		if attempt, err = strconv.Atoi(n); err != nil || attempt <= 0 {
			return 0, 0, notFoundf("mutation id %q: the attempt after @ is not a number from 1", s)
		}
	}
	return id, attempt, nil
}
