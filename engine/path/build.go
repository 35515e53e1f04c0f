package path

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The fixed segments and segment prefixes of DESIGN.md section 2. Every
// path the engine writes and every reader that takes one apart goes
// through the functions below, so that there is one spelling of each.
const (
	itemPrefix  = "do."
	roundPrefix = "agent."
	repairSeg   = "repair"
	judgeSeg    = "judge"
	// AnyItem is the segment that stands for every item of a map, reduce
	// or filter body: the plan writes its body's steps under it, and as a
	// pattern it matches each do.N.
	AnyItem = "do.*"
	// AnyRound is the segment that stands for every round of an agent
	// step: as a pattern it matches each agent.N.
	AnyRound = "agent.*"
)

// Kind is the kind of unit of work a path names.
type Kind uint8

// The kinds of unit. The zero Kind is the run itself (the empty path).
const (
	KindRun    Kind = iota // the run: the empty path
	KindPlan               // a plan called by a step: E4/triage
	KindStep               // a plan step or a branch: E1, E1/then/E10, E1/else
	KindItem               // an item of a map, reduce or filter body: E1/do.3
	KindRound              // an agent round: E1/agent.2
	KindCall               // a tool call a round made: E1/agent.2/tracker__get_issue
	KindRepair             // a repair pass on an answer: E1/agent.2/repair
	KindJudge              // an infer gate's verdict call: E1/judge
)

var kindNames = [...]string{
	KindRun:    "run",
	KindPlan:   "plan",
	KindStep:   "step",
	KindItem:   "item",
	KindRound:  "round",
	KindCall:   "tool",
	KindRepair: "repair",
	KindJudge:  "judge",
}

// String returns the kind's name as stop frames and --json write it: a
// tool call's kind is "tool".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind's name, so that JSON carries it as the
// string it was before kinds were typed.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("unit kind %d has no name", k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, name := range kindNames {
		if string(b) == name {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown unit kind %q; the kinds are %s", b, strings.Join(kindNames[:], ", "))
}

// Join appends a child segment to a path; the child of the run (the empty
// path) is the segment alone.
func Join(parent, seg string) string {
	if parent == "" {
		return seg
	}
	return parent + "/" + seg
}

// Item is the path of item i (0-based, the body's {{index}}) of the map,
// reduce or filter step at parent: E1/do.3.
func Item(parent string, i int) string {
	return parent + "/" + itemPrefix + strconv.Itoa(i)
}

// Round is the path of round n (1-based) of the agent step at step:
// E1/agent.2.
func Round(step string, n int) string {
	return step + "/" + roundPrefix + strconv.Itoa(n)
}

// Repair is the path of the repair pass on the answer of the unit at p.
func Repair(p string) string { return p + "/" + repairSeg }

// Judge is the path of the verdict call of the infer gate of the step at p.
func Judge(p string) string { return p + "/" + judgeSeg }

// Call is the path of the n-th call (1-based) of tool in the round at
// round: round/tool for the first, round/tool.2 for the second.
func Call(round, tool string, n int) string {
	if n <= 1 {
		return round + "/" + tool
	}
	return round + "/" + tool + "." + strconv.Itoa(n)
}

// Calls names the calls one round made, in order: count is how many,
// and tool(i) the tool of call i. A tool called more than once gets its
// occurrence number from the second call on (Call).
func Calls(round string, count int, tool func(i int) string) []string {
	out := make([]string, count)
	for i := range count {
		name, n := tool(i), 1
		for j := range i {
			if tool(j) == name {
				n++
			}
		}
		out[i] = Call(round, name, n)
	}
	return out
}

// Parent cuts the last segment off a path: E1/do.3 gives E1 and do.3. A
// path of one segment has the run ("") as its parent, and ok is false.
func Parent(p string) (parent, last string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p, false
	}
	return p[:i], p[i+1:], true
}

// Last is the path's last segment: E1/do.3 gives do.3.
func Last(p string) string {
	_, last, _ := Parent(p)
	return last
}

// Segments splits a path into its segments; the run's path has none.
func Segments(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// ItemIndex is the index of an item segment (do.3: 3).
func ItemIndex(seg string) (int, bool) { return number(seg, itemPrefix) }

// RoundNumber is the number of a round segment (agent.2: 2).
func RoundNumber(seg string) (int, bool) { return number(seg, roundPrefix) }

// number reads the decimal number after prefix in seg, which must be all
// there is after it.
func number(seg, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(seg, prefix)
	if !ok || digits == "" || len(digits) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// SegmentKind classifies the last segment of a path by its spelling and
// its parent's: an item, a round, a repair pass, a verdict, a tool call
// (any other segment under a round) or a step. A called plan is not told
// by spelling (E4/triage reads as a step); the engine's events and stops
// say so themselves.
func SegmentKind(parentLast, seg string) Kind {
	switch {
	case seg == "":
		return KindRun
	case seg == repairSeg:
		return KindRepair
	case seg == judgeSeg:
		return KindJudge
	}
	if _, ok := ItemIndex(seg); ok {
		return KindItem
	}
	if _, ok := RoundNumber(seg); ok {
		return KindRound
	}
	if _, ok := RoundNumber(parentLast); ok {
		return KindCall
	}
	return KindStep
}

// KindOf classifies a path by its last two segments (SegmentKind). It is
// for paths read back from outside a run (a stored run, a breakpoint);
// a running engine says what each unit is.
func KindOf(p string) Kind {
	parent, last, _ := Parent(p)
	return SegmentKind(Last(parent), last)
}

// Static is a run-time path as the plan writes it: each item segment
// do.N becomes do.*, so that every item's copy of a body step names the
// plan's one step.
func Static(p string) string {
	if !strings.Contains(p, itemPrefix) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i, seg := range Segments(p) {
		if i > 0 {
			b.WriteByte('/')
		}
		if _, ok := ItemIndex(seg); ok {
			seg = AnyItem
		}
		b.WriteString(seg)
	}
	return b.String()
}

// Parse checks that p is a path: segments joined by single slashes, none
// empty and none holding a wildcard, and returns its segments.
func Parse(p string) ([]string, error) {
	if p == "" {
		return nil, errors.New("empty path; a path names a unit of work, such as E1 or E1/do.3/agent.2")
	}
	segs := Segments(p)
	for i, s := range segs {
		if s == "" {
			return nil, fmt.Errorf("path %q: segment %d is empty; segments are joined by a single / with none at either end", p, i+1)
		}
		if strings.ContainsRune(s, '*') {
			return nil, fmt.Errorf("path %q: segment %q holds a *, which only a pattern may; write the unit's own path, such as do.3", p, s)
		}
	}
	return segs, nil
}
