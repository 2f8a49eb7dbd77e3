package tui

import (
	"strings"
	"time"

	"keep/engine/api"
)

// cardAnsweredLabel heads what was answered on an Attention card, the
// label keep attention and keep mutations give it.
const cardAnsweredLabel = "answered: "

// answeredLines are the answers already given about a card's call, the
// newest paneAnswers, newest last, after a line counting those left out,
// each wrapped to w under one label: a call asked again (after "try
// again", or sent again) shows what the person said the last time, so it
// reads as the same question asked anew. When each was given comes last,
// and is what a cut would take, so the lines wrap rather than cut.
func answeredLines(now time.Time, it api.AttentionItem, w int) []string {
	earlier, latest := latestAnswers(it.Answered, paneAnswers)
	var texts []string
	if earlier > 0 {
		texts = append(texts, earlierText(earlier, "keep mutations "+it.Workflow))
	}
	for _, a := range latest {
		t := answerText(a)
		if at := ago(now, a.At); at != "" {
			t += ", " + at
		}
		texts = append(texts, t)
	}
	var out []string
	ind := strings.Repeat(" ", len(cardAnsweredLabel))
	for _, t := range texts {
		for _, l := range wrap(t, max(w-len(ind), 1), answerMaxLines) {
			label := ind
			if len(out) == 0 {
				label = cardAnsweredLabel
			}
			out = append(out, label+l)
		}
	}
	return out
}
