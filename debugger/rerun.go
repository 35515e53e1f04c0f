package debugger

import (
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
)

// DebugReplay returns a session that runs the replay Replay would run
// under the debugger, stopping where bps says; start it with
// rec.Inputs(). A stop the session lets go on is the replay's: a step, a
// tool call or an ask is answered from the record there, and a divergence
// aborts the run. diverged tells the first divergence once the run has
// ended (nil: none was found on the way; the end's comparison of results
// is Replay's alone).
func DebugReplay(rec *Recording, p *plans.Plan, opts engine.Options, bps *Breakpoints) (s *Session, diverged func() *Divergence) {
	r, _, opts := newReplayer(rec, opts)
	return New(p, opts, bps), func() *Divergence {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.divergence
	}
}
