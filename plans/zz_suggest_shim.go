package plans

import "github.com/stepwise-dev/stepwise/plans/suggest"

func didYouMean(w string, c []string) string { return suggest.DidYouMean(w, c) }
