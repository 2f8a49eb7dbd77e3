package tui

import (
	"fmt"

	"keep/engine/api"
)

// What the person answered about a workflow itself (pause, retry,
// resume) reads the same in keep status and under the workflow's row in
// pane 1, and what they answered about a call the same on its Attention
// card and in keep attention: an answer given is history the person
// reads back, and two wordings of one answer would read as two answers.

// shownAnswers is how many of a workflow's answers its status lists: the
// newest, as weeks of use gather many; --json has them all.
const shownAnswers = 5

// paneAnswers is how many the Workflows pane lists under the selected
// row: fewer than keep status, as the pane shares its height with the
// other workflows.
const paneAnswers = 3

// latestAnswers is the newest n of as (oldest first, as the engine gives
// them), still oldest first, and how many earlier ones are left out.
func latestAnswers(as []api.AnswerView, n int) (earlier int, latest []api.AnswerView) {
	if earlier = max(len(as)-n, 0); earlier > 0 {
		as = as[earlier:]
	}
	return earlier, as
}

// answerText is one answer in words: what, the block or the call's
// attempt it answered when known (a pause answers none), and who gave
// it. Each caller adds when, in its own clock (absolute in keep status,
// relative on the screen).
func answerText(a api.AnswerView) string {
	what := a.Answer
	switch {
	case a.Block > 0:
		what += fmt.Sprintf(" (block %d)", a.Block)
	case a.Attempt > 0:
		what += fmt.Sprintf(" (attempt %d)", a.Attempt)
	}
	return what + " by " + a.AnsweredBy
}

// earlierText says how many answers are not listed, and where they are.
func earlierText(n int, where string) string {
	return fmt.Sprintf("%d earlier (%s has them)", n, where)
}
