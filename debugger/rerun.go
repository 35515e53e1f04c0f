package debugger

import (
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
)

// DebugReplay returns a session that runs the replay Replay would run
// under the debugger, stopping where bps says; start it with
// rec.Inputs(). A stop the session lets go on is the replay's: a step, a
// tool call or an ask is answered from the record there, and a divergence
// aborts the run. At an ask the session suggests the recorded answer
// (Snapshot.Prefill), since going on gives that; at a stop where a person
// replaced a reply, a result or a failure in the recorded run, it shows
// the replacement as the stop's output (Snapshot.Recorded), since going
// on gives that too. ended tells, once the run
// has ended with res, how the replay compares with its record, as Replay
// does: the first divergence on the way, or else the comparison of every
// step's result and of the outcome.
func DebugReplay(rec *Recording, p *plans.Plan, opts engine.Options, bps *Breakpoints) (s *Session, ended func(res *engine.Result) *ReplayResult) {
	r, seen, opts := newReplayer(rec, opts)
	s = New(p, opts, bps)
	s.recorded = r.recordedOutcome
	return s, func(res *engine.Result) *ReplayResult {
		return r.result(res, seen)
	}
}
