package debugger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// StepDiff compares one step of two runs. A side that did not run the
// step has an empty status and hash, and no time or tokens.
type StepDiff struct {
	Path    string            `json:"path"`
	StatusA engine.StepStatus `json:"status_a"`
	StatusB engine.StepStatus `json:"status_b"`
	// ResultHashA and ResultHashB are the first 12 hex digits of the
	// SHA-256 of the result's canonical JSON (object keys sorted); empty
	// for a step without a result.
	ResultHashA string `json:"result_hash_a"`
	ResultHashB string `json:"result_hash_b"`
	// MsDelta is B's time minus A's, in milliseconds.
	MsDelta float64 `json:"ms_delta"`
	// TokensDelta is B's tokens minus A's: the model calls the step made,
	// every input, output and cache figure counted.
	TokensDelta int `json:"tokens_delta"`
	// DecidedA and DecidedB are the actions by which a person gave the
	// step its result in each run; ReusedA and ReusedB say a replay or a
	// fork reused a recorded one (record.StepRecord's).
	DecidedA string `json:"decided_a,omitempty"`
	DecidedB string `json:"decided_b,omitempty"`
	ReusedA  string `json:"reused_a,omitempty"`
	ReusedB  string `json:"reused_b,omitempty"`
}

// Same reports whether both runs ran the step to the same status and
// result. A result injected at a stop (skipped, as a fork reuses one)
// counts as the step's own.
func (d StepDiff) Same() bool {
	return endedAs(d.StatusA) == endedAs(d.StatusB) && d.ResultHashA == d.ResultHashB
}

// Diff compares two runs step by step: every path either run has, in the
// order the steps first appear (A's order, each step only B ran placed
// where B ran it).
func Diff(a, b *record.RunDetail) []StepDiff {
	stepsA, stepsB := stepsByPath(a), stepsByPath(b)
	tokensA, tokensB := tokensByStep(a), tokensByStep(b)
	out := []StepDiff{}
	done := map[string]bool{}
	add := func(p string) {
		if done[p] {
			return
		}
		done[p] = true
		d := StepDiff{Path: p, TokensDelta: tokensB[p] - tokensA[p]}
		if s, ok := stepsA[p]; ok {
			d.StatusA, d.ResultHashA, d.MsDelta = s.Status, resultHash(s.Result), -s.Ms
			d.DecidedA, d.ReusedA = s.Decided, s.Reused
		}
		if s, ok := stepsB[p]; ok {
			d.StatusB, d.ResultHashB, d.MsDelta = s.Status, resultHash(s.Result), d.MsDelta+s.Ms
			d.DecidedB, d.ReusedB = s.Decided, s.Reused
		}
		out = append(out, d)
	}
	i, j := 0, 0
	for i < len(a.Steps) || j < len(b.Steps) {
		switch {
		case i < len(a.Steps) && done[a.Steps[i].Path]:
			i++
		case j < len(b.Steps) && done[b.Steps[j].Path]:
			j++
		case i >= len(a.Steps):
			add(b.Steps[j].Path)
		case j >= len(b.Steps):
			add(a.Steps[i].Path)
		default:
			pa, pb := a.Steps[i].Path, b.Steps[j].Path
			_, aHasB := stepsA[pb]
			_, bHasA := stepsB[pa]
			// A step only one run has goes in where that run ran it;
			// otherwise A's order leads.
			if !aHasB && bHasA {
				add(pb)
			} else {
				add(pa)
			}
		}
	}
	return out
}

func stepsByPath(d *record.RunDetail) map[string]record.StepRecord {
	out := make(map[string]record.StepRecord, len(d.Steps))
	for _, s := range d.Steps {
		out[s.Path] = s
	}
	return out
}

// tokensByStep reads the tokens of each step off the run's usage by_step.
func tokensByStep(d *record.RunDetail) map[string]int {
	out := map[string]int{}
	for _, l := range d.UsageReport.ByStep {
		out[l.Path] += l.Total()
	}
	return out
}

// resultHash is the short SHA-256 of a recorded result's canonical JSON,
// empty for none.
func resultHash(raw json.RawMessage) string {
	v, err := recordedValue(raw)
	if err != nil || v == nil {
		return ""
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])[:12]
}
