// Package suggest finds the name a user probably meant, for the
// did-you-mean hints of every message in Stepwise: plan fields, step ids,
// tools, config keys, commands.
package suggest

import "strings"

// Closest returns the candidate closest to word when it is close enough to
// be a plausible typo, or "" when none is. Close enough means a distance of
// at most a third of the word's length (and at least one), compared without
// case: that catches tol_name, mapp and esle without proposing unrelated
// names for short words.
func Closest(word string, candidates []string) string {
	best, bestDist := "", len([]rune(word))/3+1
	lower := strings.ToLower(word)
	for _, c := range candidates {
		if d := Distance(lower, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean formats Closest's answer as a message tail ("; did you mean
// 'x'?"), or "" when there is none or the word is already right.
func DidYouMean(word string, candidates []string) string {
	if s := Closest(word, candidates); s != "" && s != word {
		return "; did you mean '" + s + "'?"
	}
	return ""
}

// Distance is the optimal string alignment distance between a and b, by
// runes: Levenshtein's insertions, deletions and substitutions, plus the
// swap of two adjacent runes as one edit, the commonest typo of all (esle,
// vaule, fecth). Plain Levenshtein counts a swap as two edits, which puts
// short names out of reach of the threshold.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1) // row i-2
	prev := make([]int, len(rb)+1)  // row i-1
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
