package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
)

// terminal is the person at the terminal a run asks: its questions and its
// approvals. One prompt is on it at a time, whichever of a run's
// concurrent calls asks; what the run wrote before the prompt is flushed
// first.
type terminal struct {
	mu       sync.Mutex
	lines    *bufio.Scanner
	w        io.Writer
	progress *lineBatcher
	// display is the run's progress, which steps aside while a prompt
	// is on the terminal; nil when there is none.
	display *progressDisplay
}

// newTerminal is the terminal of s, or nil when stdin and stderr are not
// both one: then nobody can be asked.
func newTerminal(s *streams, progress *lineBatcher, display *progressDisplay) *terminal {
	if !isTerminal(s.in) || !isTerminal(s.err) {
		return nil
	}
	return &terminal{lines: bufio.NewScanner(s.in), w: s.err, progress: progress, display: display}
}

// noTerminalForApprovals says why run --approve refuses to start, and what
// to do instead.
const noTerminalForApprovals = "--approve asks on the terminal, and stdin and stderr are not both one here; " +
	"run it on a terminal, or hold the same calls with stepwise debug PLAN --approve PATTERN " +
	"(or --break 'PATTERN tool') and answer approve, deny or edit JSON on stdin"

// approve asks whether a held tool call may run: approve, deny, or edit
// its arguments, which are read as one line of JSON and checked against
// the tool's input schema, and asked again until they fit or are left
// blank. stdin closing aborts the run: nobody is there to approve.
func (t *terminal) approve(ctx context.Context, approvals *debugger.Approvals, st *engine.Stop) engine.Decision {
	// Waiting for the person, or for another prompt first, is held time.
	st.Hold()
	defer st.Release()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.progress.Flush()
	t.display.stepAside(st.Path, "approval of "+st.Tool)
	defer t.display.resume()
	fmt.Fprintf(t.w, "? run %s at %s with %s\n", st.Tool, st.Path, engine.JSONText(st.Input))
	for {
		fmt.Fprint(t.w, "  [a]pprove, [d]eny or [e]dit the arguments: ")
		if !t.lines.Scan() {
			fmt.Fprintln(t.w, "\n  no answer: the run is aborted")
			return engine.Decision{Action: engine.Abort}
		}
		// The arguments may follow e on its line: e {"id": 5}, e{"id": 5}.
		answer := strings.TrimSpace(t.lines.Text())
		word, args := answer, ""
		if i := strings.IndexAny(answer, " \t{["); i >= 0 {
			word, args = answer[:i], strings.TrimSpace(answer[i:])
		}
		switch word = strings.ToLower(word); {
		case (word == "a" || word == "approve") && args == "":
			return engine.Decision{Action: engine.Approve}
		case (word == "d" || word == "deny") && args == "":
			return engine.Decision{Action: engine.Deny}
		case word == "e" || word == "edit":
			if args, ok := t.editArguments(ctx, approvals, st, args); ok {
				return engine.Decision{Action: engine.Edit, Value: args}
			}
		default:
			fmt.Fprintln(t.w, "  answer a, d, e, or e with the arguments as JSON")
		}
	}
}

// editArguments reads arguments until they fit the tool's input schema,
// starting from given when it is not empty (the arguments written after
// e); ok is false when the line is left blank (or stdin closes), which
// goes back to the question.
func (t *terminal) editArguments(ctx context.Context, approvals *debugger.Approvals, st *engine.Stop, given string) (any, bool) {
	for {
		text := given
		given = ""
		if text == "" {
			fmt.Fprint(t.w, "  arguments (JSON on one line, blank to go back): ")
			if !t.lines.Scan() {
				return nil, false
			}
			text = strings.TrimSpace(t.lines.Text())
		}
		if text == "" {
			return nil, false
		}
		var args any
		if err := json.Unmarshal([]byte(text), &args); err != nil {
			fmt.Fprintf(t.w, "  not JSON: %v\n", err)
			continue
		}
		if err := approvals.CheckArguments(ctx, st, args); err != nil {
			fmt.Fprintf(t.w, "  %v\n", err)
			continue
		}
		return args, true
	}
}

// ask answers an ask step by walking its answer schema field by field.
func (t *terminal) ask(st *engine.Stop) engine.Decision {
	st.Hold()
	defer st.Release()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.progress.Flush()
	t.display.stepAside(st.Path, "an answer")
	defer t.display.resume()
	answer, ok := askOnTerminal(t.lines, t.w, st.Path, st.Ask)
	if !ok {
		return engine.Decision{Action: engine.Decline}
	}
	return engine.Decision{Action: engine.Answer, Value: answer}
}

// hook is the terminal's engine hook: it answers the calls approvals
// holds (none when nil), and with asks set, ask steps. Without a
// terminal it is nil.
func (t *terminal) hook(approvals *debugger.Approvals, asks bool) engine.Hook {
	if t == nil {
		return nil
	}
	var held, asked engine.Hook
	if approvals != nil {
		held = approvals.Hook(func(ctx context.Context, st *engine.Stop) engine.Decision {
			return t.approve(ctx, approvals, st)
		})
	}
	if asks {
		asked = func(ctx context.Context, st *engine.Stop) engine.Decision {
			if st.Kind != engine.StopAsk {
				return engine.Decision{}
			}
			return t.ask(st)
		}
	}
	return engine.Hooks(held, asked)
}
