package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Verb names a command of the debugger's command language. Both front ends
// read the same language: the line driver (stepwise debug) from stdin, the
// workbench from its : command line. Parsing is shared; carrying a command
// out is each front end's business.
type Verb string

// The verbs, in the order Grammar lists them.
const (
	VerbBreak       Verb = "break"
	VerbClear       Verb = "clear"
	VerbCond        Verb = "cond"
	VerbEnable      Verb = "enable"
	VerbDisable     Verb = "disable"
	VerbBreakpoints Verb = "breakpoints"
	VerbErrors      Verb = "errors"
	VerbContinue    Verb = "continue"
	VerbNext        Verb = "next"
	VerbStep        Verb = "step"
	VerbOut         Verb = "out"
	VerbUntil       Verb = "until"
	VerbPause       Verb = "pause"
	VerbInject      Verb = "inject"
	VerbReplace     Verb = "replace"
	VerbAnswer      Verb = "answer"
	VerbDecline     Verb = "decline"
	VerbEdit        Verb = "edit"
	VerbApprove     Verb = "approve"
	VerbDeny        Verb = "deny"
	VerbAbort       Verb = "abort"
	VerbPrint       Verb = "print"
	VerbWatch       Verb = "watch"
	VerbUnwatch     Verb = "unwatch"
	VerbWatches     Verb = "watches"
	VerbStack       Verb = "stack"
	VerbThreads     Verb = "threads"
	VerbThread      Verb = "thread"
	VerbWhere       Verb = "where"
	VerbRun         Verb = "run"
	VerbDebug       Verb = "debug"
	VerbGate        Verb = "gate"
	VerbGoto        Verb = "goto"
	VerbOpen        Verb = "open"
	VerbFork        Verb = "fork"
	VerbDiff        Verb = "diff"
	VerbTools       Verb = "tools"
	VerbRuns        Verb = "runs"
	VerbNew         Verb = "new"
	VerbHelp        Verb = "help"
	VerbQuit        Verb = "quit"
)

// Syntax describes one command for help screens and completion: its verb,
// its short forms, what follows it and what it does.
type Syntax struct {
	Verb    Verb     `json:"verb"`
	Aliases []string `json:"aliases,omitempty"`
	Args    string   `json:"args,omitempty"` // "PATTERN [KIND...] [if VALUE OP TO]"
	Does    string   `json:"does"`
}

// Usage is the command as a user writes it: "break PATTERN [KIND...]".
func (s Syntax) Usage() string {
	if s.Args == "" {
		return string(s.Verb)
	}
	return string(s.Verb) + " " + s.Args
}

var grammar = []Syntax{
	{VerbBreak, []string{"b"}, "PATTERN [KIND...] [if VALUE OP TO]", "set a breakpoint (kinds: " + kindList() + ")"},
	{VerbClear, nil, "ID", "remove a breakpoint"},
	{VerbCond, nil, "ID [VALUE OP TO]", "set a breakpoint's condition, or remove it"},
	{VerbEnable, nil, "ID", "turn a breakpoint on"},
	{VerbDisable, nil, "ID", "turn a breakpoint off"},
	{VerbBreakpoints, []string{"bp"}, "", "list the breakpoints"},
	{VerbErrors, nil, "on|off", "break on error, or not"},
	{VerbContinue, []string{"c"}, "", "run to the next breakpoint, error or ask"},
	{VerbNext, []string{"n"}, "", "stop at the next stop at this depth or shallower, in this thread"},
	{VerbStep, []string{"s"}, "", "stop at the next stop at any depth, in this thread while it lives"},
	{VerbOut, []string{"o"}, "", "stop at the next stop shallower than this one (at the top level: as next)"},
	{VerbUntil, nil, "PATTERN", "run to the next stop whose path matches PATTERN (a breakpoint pattern), then forget it"},
	{VerbPause, nil, "", "stop at the next stop, whatever it is"},
	{VerbInject, nil, "JSON", "skip the step or tool call with this result, then next"},
	{VerbReplace, nil, "JSON", "replace the reply, result or error with this value, then next"},
	{VerbAnswer, nil, "JSON", "answer the ask, then next"},
	{VerbDecline, nil, "", "decline the ask, then next"},
	{VerbEdit, nil, "JSON", "run the tool call with these arguments (checked against its input schema), then next"},
	{VerbApprove, nil, "", "let the tool call held for approval run, then continue"},
	{VerbDeny, nil, "", "refuse the tool call: the model reads 'Error: denied by the user', a step fails; then continue"},
	{VerbAbort, nil, "", "abort the run"},
	{VerbPrint, []string{"p"}, "PATH", "show a value in scope at the stop (item.id, open_issues.issues.0)"},
	{VerbWatch, nil, "PATH", "show PATH, as print does, at every stop from now on"},
	{VerbUnwatch, nil, "ID", "stop showing a watch"},
	{VerbWatches, nil, "", "list the watches, read at the stop"},
	{VerbStack, []string{"bt"}, "", "the frames of the stop, innermost first"},
	{VerbThreads, nil, "", "every live thread, running or held, and where it is"},
	{VerbThread, nil, "ID", "make a held thread the one the next command acts on"},
	{VerbWhere, nil, "", "where the run is held, and why"},
	{VerbRun, nil, "[JSON]", "run the plan with these inputs"},
	{VerbDebug, nil, "[JSON]", "run the plan under the debugger, to its breakpoints (the first stop when none is set)"},
	{VerbGate, nil, "PATTERN...|off", "hold the next runs' tool calls that match, unless read-only, for approve, deny or edit"},
	{VerbGoto, nil, "PATH", "select a step"},
	{VerbOpen, nil, "RUN", "open an earlier run"},
	{VerbFork, nil, "[PATH]", "run again from a step of this run, reusing what came before"},
	{VerbDiff, nil, "RUN", "compare this run with another"},
	{VerbTools, nil, "", "the tool catalog"},
	{VerbRuns, nil, "", "the earlier runs"},
	{VerbNew, nil, "NAME", "a new plan from a skeleton, NAME its identifier"},
	{VerbHelp, nil, "[COMMAND]", "list the commands, or say what one does"},
	{VerbQuit, []string{"q"}, "", "abort the run and leave"},
}

// Grammar lists every command of the language.
func Grammar() []Syntax {
	return slices.Clone(grammar)
}

// syntaxOf finds a command by its verb or one of its short forms.
func syntaxOf(word string) (Syntax, bool) {
	for _, s := range grammar {
		if string(s.Verb) == word || slices.Contains(s.Aliases, word) {
			return s, true
		}
	}
	return Syntax{}, false
}

// Instruction is one parsed line of the command language: the verb, and
// the arguments that verb takes (the other fields stay zero).
type Instruction struct {
	Verb Verb
	// Pattern, Kinds and Condition are a breakpoint (break); Condition
	// alone is cond's, nil to remove one; Pattern alone is until's.
	Pattern string
	// Patterns are gate's; none for gate off.
	Patterns  []string
	Kinds     []engine.StopKind
	Condition *Condition
	// ID is the breakpoint clear, cond, enable and disable act on, or
	// the watch unwatch removes.
	ID int
	// On is errors' setting.
	On bool
	// Value is what inject, replace, answer and edit decide with.
	Value any
	// Inputs are run's and debug's inputs; nil when none were given.
	Inputs map[string]any
	// Path is the template path print and watch read, the step goto
	// selects, the step fork starts from ("" for fork: the selected one),
	// the identifier new gives its plan and the thread thread chooses.
	Path string
	// Run is the run open shows and diff compares with.
	Run string
	// Topic is the command help explains; "" for all of them.
	Topic Verb
}

// ErrEmptyLine is ParseCommand's answer to a line with nothing on it, which
// a front end usually ignores rather than reports.
var ErrEmptyLine = errors.New("type a command; help lists them")

// ParseCommand reads one line of the command language. Its errors say what
// would fix the line.
func ParseCommand(line string) (Instruction, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return Instruction{}, ErrEmptyLine
	}
	word, rest := line, ""
	if i := strings.IndexFunc(line, isSpace); i >= 0 {
		word, rest = line[:i], strings.TrimSpace(line[i:])
	}
	syn, ok := syntaxOf(word)
	if !ok {
		return Instruction{}, fmt.Errorf("unknown command '%s'%s (help lists the commands)", word, suggest.DidYouMean(word, verbNames()))
	}
	in := Instruction{Verb: syn.Verb}
	args := strings.Fields(rest)
	var err error
	switch syn.Verb {
	case VerbBreak:
		err = in.parseBreak(syn, args)
	case VerbClear, VerbEnable, VerbDisable:
		if len(args) != 1 {
			return in, argsError(syn, "one breakpoint number", "2")
		}
		in.ID, err = breakpointID(syn, args[0])
	case VerbUnwatch:
		if len(args) != 1 {
			return in, argsError(syn, "one watch number (watches lists them)", "1")
		}
		if in.ID, err = strconv.Atoi(args[0]); err != nil || in.ID < 1 {
			return in, fmt.Errorf("unwatch takes a watch number, as in unwatch 1 (watches lists them); '%s' is not one", args[0])
		}
	case VerbUntil:
		if len(args) != 1 {
			return in, argsError(syn, "one path pattern", "E1/do.*/A")
		}
		if _, err := path.Compile(args[0]); err != nil {
			return in, err
		}
		in.Pattern = args[0]
	case VerbThread:
		if len(args) != 1 {
			return in, argsError(syn, "one thread id (threads lists them)", "E1/do.2")
		}
		in.Path = args[0]
	case VerbCond:
		if len(args) == 0 {
			return in, argsError(syn, "a breakpoint number and a condition", "1 {{stop.round}} gte 2")
		}
		if in.ID, err = breakpointID(syn, args[0]); err == nil && len(args) > 1 {
			in.Condition, err = ParseCondition(strings.Join(args[1:], " "))
		}
	case VerbErrors:
		if rest == "" {
			return in, errors.New("errors takes on or off: errors off lets failures through without stopping")
		}
		if len(args) != 1 || (args[0] != "on" && args[0] != "off") {
			return in, fmt.Errorf("errors takes on or off, not '%s'", rest)
		}
		in.On = args[0] == "on"
	case VerbInject, VerbReplace, VerbAnswer, VerbEdit:
		if rest == "" {
			return in, argsError(syn, "a JSON value", `{"ok": true}`)
		}
		in.Value, err = parseJSON(syn, rest)
	case VerbRun, VerbDebug:
		if rest != "" {
			in.Inputs, err = parseInputs(syn, rest)
		}
	case VerbGate:
		if len(args) == 0 {
			return in, argsError(syn, "the patterns of the calls to hold, or off", "**/tracker__*")
		}
		if len(args) == 1 && args[0] == "off" {
			break
		}
		for _, a := range args {
			if _, err := path.Compile(a); err != nil {
				return in, fmt.Errorf("%s: %w", syn.Verb, err)
			}
		}
		in.Patterns = args
	case VerbPrint, VerbWatch:
		if rest == "" {
			return in, argsError(syn, "a path in scope", "item.id")
		}
		if _, perr := parsePath(rest); perr != nil {
			return in, fmt.Errorf("%s: %w", syn.Verb, perr)
		}
		in.Path = rest
	case VerbGoto:
		if len(args) != 1 {
			return in, argsError(syn, "one step path", "E1/do.3")
		}
		if _, err := path.Parse(args[0]); err != nil {
			return in, fmt.Errorf("%s: %w", syn.Verb, err)
		}
		in.Path = args[0]
	case VerbFork:
		if len(args) > 1 {
			return in, argsError(syn, "at most one step path", "E2")
		}
		if len(args) == 1 {
			in.Path = args[0]
		}
	case VerbNew:
		if len(args) != 1 {
			return in, argsError(syn, "the new plan's identifier", "triage")
		}
		if !plans.ValidIdentifier(args[0]) {
			return in, fmt.Errorf("'%s' is not a plan identifier: use letters, digits, '_' and '-', as in new triage", args[0])
		}
		in.Path = args[0]
	case VerbOpen, VerbDiff:
		if len(args) != 1 {
			return in, argsError(syn, "one run id (runs lists them)", "3f2a")
		}
		in.Run = args[0]
	case VerbHelp:
		if len(args) > 1 {
			return in, argsError(syn, "at most one command", "help break")
		}
		if len(args) == 1 {
			topic, ok := syntaxOf(args[0])
			if !ok {
				return in, fmt.Errorf("there is no command '%s' to explain%s", args[0], suggest.DidYouMean(args[0], verbNames()))
			}
			in.Topic = topic.Verb
		}
	default:
		if rest != "" {
			return in, fmt.Errorf("%s takes nothing after it; write %s alone", syn.Verb, syn.Verb)
		}
	}
	if err != nil {
		return Instruction{}, err
	}
	return in, nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// parseBreak reads "PATTERN [KIND...] [if VALUE OP TO]".
func (in *Instruction) parseBreak(syn Syntax, args []string) error {
	ifAt := slices.Index(args, "if")
	spec := args
	if ifAt >= 0 {
		spec = args[:ifAt]
	}
	if len(spec) == 0 {
		return argsError(syn, "a PATTERN", "E1/do.*/agent.2 round")
	}
	if _, err := path.Compile(spec[0]); err != nil {
		return err
	}
	in.Pattern = spec[0]
	for _, k := range spec[1:] {
		kind := engine.StopKind(k)
		if !slices.Contains(StopKinds, kind) {
			return fmt.Errorf("'%s' is not a stop kind%s (kinds: %s)", k, suggest.DidYouMean(k, kindNames()), kindList())
		}
		in.Kinds = append(in.Kinds, kind)
	}
	if ifAt >= 0 {
		c, err := ParseCondition(strings.Join(args[ifAt+1:], " "))
		if err != nil {
			return err
		}
		in.Condition = c
	}
	return nil
}

func breakpointID(syn Syntax, word string) (int, error) {
	id, err := strconv.Atoi(word)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%s takes a breakpoint number, as in %s 2 (breakpoints lists them); '%s' is not one", syn.Verb, syn.Verb, word)
	}
	return id, nil
}

// argsError says what a command takes, with an example of it.
func argsError(syn Syntax, what, example string) error {
	if !strings.HasPrefix(example, string(syn.Verb)+" ") {
		example = string(syn.Verb) + " " + example
	}
	return fmt.Errorf("%s takes %s: %s, as in %s", syn.Verb, what, syn.Usage(), example)
}

// parseJSON reads the JSON value that ends a line, saying where it breaks.
func parseJSON(syn Syntax, text string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && !strings.HasPrefix(se.Error(), "unexpected end") {
			return nil, fmt.Errorf("%s takes a JSON value: %v, at character %d of %s", syn.Verb, err, len([]rune(text[:max(se.Offset-1, 0)]))+1, cutText(text))
		}
		return nil, fmt.Errorf("%s takes a JSON value: %v", syn.Verb, err)
	}
	return v, nil
}

func parseInputs(syn Syntax, text string) (map[string]any, error) {
	v, err := parseJSON(syn, text)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s takes a JSON object of the plan's inputs, as in %s {\"issue\": 42}, not %s", syn.Verb, syn.Verb, cutText(text))
	}
	return m, nil
}

// cutText shortens user text quoted back in an error.
func cutText(s string) string {
	const most = 40
	if r := []rune(s); len(r) > most {
		return string(r[:most-1]) + "…"
	}
	return s
}

func verbNames() []string {
	names := make([]string, len(grammar))
	for i, s := range grammar {
		names[i] = string(s.Verb)
	}
	return names
}

func kindNames() []string {
	names := make([]string, len(StopKinds))
	for i, k := range StopKinds {
		names[i] = string(k)
	}
	return names
}

// Command is the session command an instruction stands for, for the verbs
// that act at a stop: the movements, and the decisions, which go on as
// next does. ok is false for every other verb; quit is left to the front
// end, which may abort a run or only leave.
func (in Instruction) Command() (cmd Command, ok bool) {
	moves := map[Verb]Movement{VerbContinue: Continue, VerbNext: Next, VerbStep: StepIn, VerbOut: StepOut}
	if m, ok := moves[in.Verb]; ok {
		return Command{Move: m}, true
	}
	switch in.Verb {
	case VerbUntil:
		return Command{Move: Continue, Until: in.Pattern}, true
	case VerbInject:
		return Command{Decision: engine.Decision{Action: engine.Inject, Value: in.Value}, Move: Next}, true
	case VerbReplace:
		return Command{Decision: engine.Decision{Action: engine.Replace, Value: in.Value}, Move: Next}, true
	case VerbAnswer:
		return Command{Decision: engine.Decision{Action: engine.Answer, Value: in.Value}, Move: Next}, true
	case VerbDecline:
		return Command{Decision: engine.Decision{Action: engine.Decline}, Move: Next}, true
	case VerbEdit:
		return Command{Decision: engine.Decision{Action: engine.Edit, Value: in.Value}, Move: Next}, true
	case VerbApprove:
		return Command{Decision: engine.Decision{Action: engine.Approve}, Move: Continue}, true
	case VerbDeny:
		return Command{Decision: engine.Decision{Action: engine.Deny}, Move: Continue}, true
	case VerbAbort:
		return Command{Decision: engine.Decision{Action: engine.Abort}, Move: Continue}, true
	}
	return Command{}, false
}

// String writes the instruction back as a line, in its canonical form:
// full verbs, single spaces, compact JSON. ParseCommand reads it back to
// the same instruction.
func (in Instruction) String() string {
	words := []string{string(in.Verb)}
	switch in.Verb {
	case VerbBreak:
		words = append(words, Breakpoint{Pattern: in.Pattern, Kinds: in.Kinds, Condition: in.Condition}.Spec())
	case VerbClear, VerbEnable, VerbDisable, VerbUnwatch:
		words = append(words, strconv.Itoa(in.ID))
	case VerbUntil:
		words = append(words, in.Pattern)
	case VerbCond:
		words = append(words, strconv.Itoa(in.ID))
		if in.Condition != nil {
			words = append(words, in.Condition.String())
		}
	case VerbErrors:
		words = append(words, map[bool]string{true: "on", false: "off"}[in.On])
	case VerbInject, VerbReplace, VerbAnswer, VerbEdit:
		words = append(words, engine.JSONText(in.Value))
	case VerbRun, VerbDebug:
		if in.Inputs != nil {
			words = append(words, engine.JSONText(in.Inputs))
		}
	case VerbPrint, VerbWatch, VerbThread, VerbGoto, VerbFork, VerbNew:
		if in.Path != "" {
			words = append(words, in.Path)
		}
	case VerbOpen, VerbDiff:
		words = append(words, in.Run)
	case VerbGate:
		if len(in.Patterns) == 0 {
			words = append(words, "off")
		}
		words = append(words, in.Patterns...)
	case VerbHelp:
		if in.Topic != "" {
			words = append(words, string(in.Topic))
		}
	}
	return strings.Join(words, " ")
}

// Spec is the breakpoint as break takes it: "PATTERN [KIND...] [if VALUE
// OP TO]".
func (b Breakpoint) Spec() string {
	words := []string{b.Pattern}
	for _, k := range b.Kinds {
		words = append(words, string(k))
	}
	if b.Condition != nil {
		words = append(words, "if", b.Condition.String())
	}
	return strings.Join(words, " ")
}

// String writes the condition as ParseCondition reads it: "VALUE OP [TO]".
// TO is written bare when it is a plain word that would read back as the
// same string, as JSON otherwise (null included: "{{x}} eq null").
func (c *Condition) String() string {
	text := c.Value + " " + c.Op
	if plans.GateOpTestsValueAlone(c.Op) {
		return text
	}
	switch to := c.To.(type) {
	case string:
		var v any
		if to != "" && strings.Join(strings.Fields(to), " ") == to && json.Unmarshal([]byte(to), &v) != nil {
			text += " " + to
		} else {
			text += " " + engine.JSONText(to)
		}
	default:
		text += " " + engine.JSONText(to)
	}
	return text
}
