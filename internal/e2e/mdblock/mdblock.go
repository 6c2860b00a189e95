// Package mdblock finds the code block a document (README.md) marks for
// a test to run: the one fenced block of a language between two HTML
// comment markers. The README tour and the README's Go example are run
// by tests this way, so that what the README shows is what works.
package mdblock

import (
	"errors"
	"fmt"
	"strings"
)

// Extract returns the body of the one ```lang block of doc between the
// markers begin and end. what names the block in errors ("the tour's").
func Extract(doc, begin, end, lang, what string) (string, error) {
	_, rest, ok := strings.Cut(doc, begin)
	if !ok {
		return "", fmt.Errorf("no %s marker", begin)
	}
	block, _, ok := strings.Cut(rest, end)
	if !ok {
		return "", fmt.Errorf("no %s marker after %s", end, begin)
	}
	fence := "```" + lang + "\n"
	_, body, ok := strings.Cut(block, fence)
	if !ok {
		return "", fmt.Errorf("no ```%s block between %s markers", lang, what)
	}
	body, after, ok := strings.Cut(body, "```")
	if !ok {
		return "", fmt.Errorf("%s ```%s block is not closed", what, lang)
	}
	if strings.TrimSpace(after) != "" {
		return "", fmt.Errorf("text after %s block, before %s: %q", what, end, strings.TrimSpace(after))
	}
	if strings.TrimSpace(body) == "" {
		return "", errors.New(what + " block is empty")
	}
	return body, nil
}
