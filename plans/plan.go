package plans

// The names of the seven control steps: tool names the executor evaluates
// itself instead of dispatching to the catalog.
const (
	ControlExit   = "exit"
	ControlDecide = "decide"
	ControlFilter = "filter"
	ControlMap    = "map"
	ControlReduce = "reduce"
	ControlAgent  = "agent"
	ControlAsk    = "ask"
)

// ControlSteps lists the control-step names in the order the reference
// documents them.
var ControlSteps = []string{ControlExit, ControlAsk, ControlAgent, ControlDecide, ControlFilter, ControlMap, ControlReduce}

// IsControl reports whether name is a control step.
func IsControl(name string) bool {
	switch name {
	case ControlExit, ControlDecide, ControlFilter, ControlMap, ControlReduce, ControlAgent, ControlAsk:
		return true
	}
	return false
}

// PlannerTool is the reserved name of the LLM planner. Plans may name it as a
// step tool; Stepwise does not run it yet, and agents never get it.
const PlannerTool = "plan_and_execute"

// Plan is a loaded plan file. It is immutable: nothing writes to it after
// Load returns.
type Plan struct {
	File            string
	Pos             Pos // the document's top-level mapping
	Identifier      Field[string]
	Name            Field[string]
	Description     Field[string]
	Exemplars       []Field[string]
	RequiresServers []Field[string]
	// ReadOnly declares that calling the plan as plan__<identifier>
	// changes nothing outside the run, so an approval does not hold it.
	// Undeclared, it is not read-only: its steps may call anything.
	ReadOnly    Field[bool]
	InputSchema *Schema
	Steps       []*Step
	Solver      *Solver
	Output      *Value // a template map; nil when the plan has none
}

// FinishMode is how a plan ends.
type FinishMode string

// The finish modes.
const (
	FinishSolver FinishMode = "solver" // an LLM writes the answer
	FinishOutput FinishMode = "output" // the output templates make the result
	FinishSilent FinishMode = "silent" // neither: the run's result is its steps'
)

// String returns the mode as the plan language names it.
func (m FinishMode) String() string { return string(m) }

// FinishMode says how the plan ends.
func (p *Plan) FinishMode() FinishMode {
	switch {
	case p.Solver != nil:
		return FinishSolver
	case p.Output != nil:
		return FinishOutput
	}
	return FinishSilent
}

// Solver is the LLM-written finish of a plan.
type Solver struct {
	Pos           Pos
	QueryToAnswer *Value // a template string; nil: the solver is asked to run the plan, by name, as graph asks it
	SystemPrompt  *Value // optional template string
	Data          *Value // a template map; nil or empty: the solver sees the plan's input and every top-level step's result, by id
}

// Step is one step of a plan or of a body. Path is its static path: "E1",
// "E1/then/E10", "E1/else", "E2/do.*/E20". A map, reduce or filter body's
// path carries "do.*", the breakpoint pattern that matches every item's run
// time path ("E2/do.3/E20"), so a path read off the tree is a valid pattern.
type Step struct {
	Pos       Pos
	Path      string
	ID        Field[string] // empty for the single call of a single-call body
	ToolName  Field[string]
	Input     *Value // the input as written; for control steps also decoded into Control
	Reasoning Field[string]
	// TimeoutSecs bounds the call of an MCP server's tool or an exec tool,
	// in place of the server's call_timeout_secs or the tool file's
	// timeout_secs.
	TimeoutSecs Field[int]

	// Control is the decoded input of a control step: *ExitInput,
	// *DecideInput, *FilterInput, *MapInput, *ReduceInput, *AgentInput or
	// *AskInput. It is nil for catalog tools, and for a control step whose
	// input is not a mapping.
	Control any
}

// Body is the then/else branch of a decide or the do of a map or reduce:
// either one tool call without an id, or an inline list of steps.
type Body struct {
	Pos    Pos
	Single bool // a single tool call; Steps then holds exactly that call
	Steps  []*Step
}

// Gate is the logical comparison of exit (when), decide (if) and filter
// (where): value op to.
type Gate struct {
	Pos   Pos
	Value *Value
	Op    Field[string]
	To    *Value // nil for empty and not_empty
}

// The gate operators.
var GateOps = []string{"eq", "ne", "gt", "lt", "gte", "lte", "empty", "not_empty", "contains"}

// GateOpTestsValueAlone reports whether a gate's op tests its value alone
// (empty, not_empty), taking no 'to' to compare it with.
func GateOpTestsValueAlone(op string) bool {
	return op == "empty" || op == "not_empty"
}

// Condition is the gate of a control step: a logical Gate, an Infer question
// for the judge role, or neither (only exit allows that: an unconditional
// exit).
type Condition struct {
	Gate  *Gate
	Infer *Value // a template string
	Model *Value // optional model for the infer verdict; may be a template
}

// ExitInput is the input of an exit step.
type ExitInput struct {
	Condition
	Status  Field[string] // "success" or "error"
	Message *Value
	Output  *Value // a template map emitted as the plan's output when the exit fires
}

// DecideInput is the input of a decide step.
type DecideInput struct {
	Condition
	Then *Body
	Else *Body // nil when absent
}

// FilterInput is the input of a filter step.
type FilterInput struct {
	Condition
	Over        *Value
	Concurrency Field[int]
}

// MapInput is the input of a map step.
type MapInput struct {
	Over        *Value
	Do          *Body
	Concurrency Field[int]
}

// ReduceInput is the input of a reduce step.
type ReduceInput struct {
	Over    *Value
	Do      *Body
	Initial *Value // nil: the accumulator starts as null
}

// AskInput is the input of an ask step.
type AskInput struct {
	Prompt         *Value
	OutputSchema   *Schema
	WhenUnanswered Field[string] // "fail" (default) or "default"
	Default        *Value
}

// AgentInput is the input of an agent step, including the controls of
// seeds/002 (validation_exhaustion and the rest).
type AgentInput struct {
	Prompt        *Value
	OutputSchema  *Schema
	Tools         *ToolPatterns // nil: the whole catalog
	MaxIterations Field[int]
	Model         Field[string]
	SystemPrompt  *Value

	ValidationExhaustion *ValidationExhaustion
	StructuredOutput     Field[string] // "strict" or unset
	LLMTimeoutSeconds    Field[int]
	MaxToolCalls         Field[int]
	MaxFanOut            Field[int]
	ToolTimeout          Field[int]
}

// The agent-step defaults.
const (
	DefaultMaxIterations       = 8
	DefaultExhaustionThreshold = 6
	DefaultLLMTimeoutSeconds   = 600
	DefaultMaxToolCalls        = 20
	DefaultToolTimeoutSeconds  = 30
)

// Iterations is the agent's round budget, its default applied.
func (a *AgentInput) Iterations() int {
	if a.MaxIterations.Set {
		return a.MaxIterations.Value
	}
	return DefaultMaxIterations
}

// ToolPatterns is an agent's tools list: exact names or * wildcards.
type ToolPatterns struct {
	Pos      Pos
	Patterns []Field[string]
}

// ValidationExhaustion is the validation_exhaustion block of an agent step.
type ValidationExhaustion struct {
	Pos           Pos
	Threshold     Field[int]    // default DefaultExhaustionThreshold
	Mode          Field[string] // "fail" (default) or "default"
	DefaultOutput *Value
}
