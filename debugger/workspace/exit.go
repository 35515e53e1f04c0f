package workspace

import (
	"errors"

	"github.com/stepwise-dev/stepwise/engine"
)

// The exit codes of the scripting contract (DESIGN.md section 3), which
// every front end reports a run's end by: the CLI as its process status,
// the DAP server in its exited event.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitNeedsInput is a run refused for inputs that do not fit the
	// plan's input_schema.
	ExitNeedsInput = 3
	// ExitAssertion is an exit gate that fired with status error.
	ExitAssertion = 4
	// ExitInterrupted is the shell's code for a command ended by ctrl-c,
	// used for any signal that stopped a run, so that a script can tell a
	// cancelled run from a failed one.
	ExitInterrupted = 130
)

// ExitCode is the code a run's end exits with: res as it ended, or err,
// why the engine would not start it. An interruption is the caller's to
// tell: the end alone does not say who stopped the run.
func ExitCode(res *engine.Result, err error) int {
	var inputErr *engine.InputError
	switch {
	case errors.As(err, &inputErr):
		return ExitNeedsInput
	case err != nil, res == nil:
		return ExitFailure
	case res.Status == engine.StatusFailed && res.Exit != nil:
		return ExitAssertion
	case res.Status == engine.StatusFailed, res.Status == engine.StatusAborted:
		return ExitFailure
	}
	return ExitOK
}
