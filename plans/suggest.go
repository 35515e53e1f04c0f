package plans

import "strings"

// suggest returns the candidate closest to word when it is close enough to
// be a plausible typo, or "" when none is. Close enough means an edit
// distance of at most a third of the word's length (and at least one), which
// catches tol_name and mapp without proposing unrelated names.
func suggest(word string, candidates []string) string {
	best, bestDist := "", len(word)/3+1
	lower := strings.ToLower(word)
	for _, c := range candidates {
		if d := editDistance(lower, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats suggest's answer as a sentence tail, or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" && s != word {
		return "; did you mean '" + s + "'?"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
