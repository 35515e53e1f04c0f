package debugger

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestParseCommand reads lines of every verb and short form, and checks
// the instruction through its canonical line, which names every field the
// verb takes.
func TestParseCommand(t *testing.T) {
	cases := []struct {
		line string
		want string // the canonical line
	}{
		{"break E1/do.*/agent.2 round", "break E1/do.*/agent.2 round"},
		{"b   E1\tstep tool", "break E1 step tool"},
		{"break E1/do.*/A step if {{item}} eq c", "break E1/do.*/A step if {{item}} eq c"},
		{"break ** if {{stop.round}} gte 2", "break ** if {{stop.round}} gte 2"},
		{`break E1 if {{item.id}} eq "true"`, `break E1 if {{item.id}} eq "true"`},
		{`break E1 if {{item.tags}} contains  two  words`, `break E1 if {{item.tags}} contains two words`},
		{"break E1 if {{E0.issues}} empty", "break E1 if {{E0.issues}} empty"},
		{"clear 2", "clear 2"},
		{"enable 1", "enable 1"},
		{"disable 3", "disable 3"},
		{"cond 1 {{stop.hits}} gte 3", "cond 1 {{stop.hits}} gte 3"},
		{"cond 1", "cond 1"},
		{"bp", "breakpoints"},
		{"errors off", "errors off"},
		{"errors on", "errors on"},
		{"c", "continue"},
		{"n", "next"},
		{"s", "step"},
		{"o", "out"},
		{"pause", "pause"},
		{`inject {"n": 42, "s": "a b"}`, `inject {"n":42,"s":"a b"}`},
		{"replace null", "replace null"},
		{`answer "yes <ok>"`, `answer "yes <ok>"`},
		{"decline", "decline"},
		{`edit {"query":  "x"}`, `edit {"query":"x"}`},
		{"approve", "approve"},
		{"deny", "deny"},
		{"abort", "abort"},
		{"p item.id", "print item.id"},
		{"print {{E0.issues.0}}", "print {{E0.issues.0}}"},
		{"bt", "stack"},
		{"threads", "threads"},
		{"where", "where"},
		{"run", "run"},
		{`run {"issue": 42}`, `run {"issue":42}`},
		{`debug {}`, `debug {}`},
		{"gate **/tracker__*  E1", "gate **/tracker__* E1"},
		{"gate off", "gate off"},
		{"goto E1/do.3/agent.2", "goto E1/do.3/agent.2"},
		{"open 3f2a", "open 3f2a"},
		{"fork", "fork"},
		{"fork E2", "fork E2"},
		{"diff 3f2a", "diff 3f2a"},
		{"tools", "tools"},
		{"runs", "runs"},
		{"new triage_2", "new triage_2"},
		{"help", "help"},
		{"help b", "help break"},
		{"q", "quit"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			in, err := ParseCommand(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if got := in.String(); got != tc.want {
				t.Errorf("read as %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParseFields checks the fields a front end reads, where the canonical
// line could hide a difference (JSON types, a removed condition).
func TestParseFields(t *testing.T) {
	in, _ := ParseCommand(`break E1/do.*/A step result if {{item}} eq 3`)
	if in.Pattern != "E1/do.*/A" || !reflect.DeepEqual(in.Kinds, []engine.StopKind{engine.StopStep, engine.StopResult}) ||
		in.Condition == nil || in.Condition.Value != "{{item}}" || in.Condition.Op != "eq" || in.Condition.To != 3.0 {
		t.Errorf("break: %+v %+v", in, in.Condition)
	}
	if in, _ := ParseCommand("cond 4"); in.ID != 4 || in.Condition != nil {
		t.Errorf("cond without a condition: %+v", in)
	}
	if in, _ := ParseCommand(`inject {"a": [1, "x"]}`); !reflect.DeepEqual(in.Value, map[string]any{"a": []any{1.0, "x"}}) {
		t.Errorf("inject value %#v", in.Value)
	}
	if in, _ := ParseCommand("run"); in.Inputs != nil {
		t.Errorf("run without inputs has %v", in.Inputs)
	}
	if in, _ := ParseCommand("errors off"); in.On {
		t.Error("errors off reads as on")
	}
}

// TestParseErrors checks that a line that does not parse is refused with a
// message that says what would fix it.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{"contine", "unknown command 'contine'; did you mean 'continue'? (help lists the commands)"},
		{"frobnicate", "unknown command 'frobnicate' (help lists the commands)"},
		{"break", "break takes a PATTERN: break PATTERN [KIND...] [if VALUE OP TO], as in break E1/do.*/agent.2 round"},
		{"break if {{x}} eq 1", "break takes a PATTERN"},
		{"break E1 rond", "'rond' is not a stop kind; did you mean 'round'? (kinds: step, round, reply, tool, result, repair, error, ask)"},
		{"break E1//A", "segment 2 is empty"},
		{"break E1 if {{x}} bigger 2", "a condition is VALUE OP [TO] with OP one of"},
		{"break E1 if", "a condition is VALUE OP [TO]"},
		{"break E1 step if {{item.id}} eq", "a condition is VALUE OP [TO] and eq compares VALUE with TO, which is missing, as in {{item.id}} eq 1 (only empty and not_empty take none; write null to compare with null)"},
		{"cond 1 {{x}} gte", "gte compares VALUE with TO, which is missing"},
		{"clear", "clear takes one breakpoint number: clear ID, as in clear 2"},
		{"clear x", "clear takes a breakpoint number, as in clear 2 (breakpoints lists them); 'x' is not one"},
		{"enable 0", "'0' is not one"},
		{"disable 1 2", "disable takes one breakpoint number"},
		{"cond", "cond takes a breakpoint number and a condition: cond ID [VALUE OP TO], as in cond 1 {{stop.round}} gte 2"},
		{"cond 1 {{x}} is 2", "OP one of"},
		{"errors maybe", "errors takes on or off, not 'maybe'"},
		{"errors", "errors takes on or off: errors off lets failures through without stopping"},
		{"inject", `inject takes a JSON value: inject JSON, as in inject {"ok": true}`},
		{`inject {"n": 4`, "inject takes a JSON value: unexpected end of JSON input"},
		{`replace {"n": x}`, `replace takes a JSON value: invalid character 'x' looking for beginning of value, at character 7 of {"n": x}`},
		{`answer yes`, "answer takes a JSON value"},
		{`run [1]`, `run takes a JSON object of the plan's inputs, as in run {"issue": 42}, not [1]`},
		{`debug "x"`, "debug takes a JSON object"},
		{"print", "print takes a path in scope: print PATH, as in print item.id"},
		{"print a..b", "print:"},
		{"goto", "goto takes one step path: goto PATH, as in goto E1/do.3"},
		{"goto E1 E2", "goto takes one step path"},
		{"goto E1//do.3", `goto: path "E1//do.3": segment 2 is empty`},
		{"goto E1/do.*", "goto: path \"E1/do.*\": segment \"do.*\" holds a *, which only a pattern may"},
		{"fork E1 E2", "fork takes at most one step path"},
		{"open", "open takes one run id (runs lists them): open RUN, as in open 3f2a"},
		{"diff a b", "diff takes one run id"},
		{"new", "new takes the new plan's identifier: new NAME, as in new triage"},
		{"new a/b", "'a/b' is not a plan identifier"},
		{"help brek", "there is no command 'brek' to explain; did you mean 'break'?"},
		{"help a b", "help takes at most one command"},
		{"next 2", "next takes nothing after it; write next alone"},
		{"quit now", "quit takes nothing after it"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			in, err := ParseCommand(tc.line)
			if err == nil {
				t.Fatalf("parsed as %q", in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to hold %q", err, tc.want)
			}
		})
	}
	for _, blank := range []string{"", "  \t "} {
		if _, err := ParseCommand(blank); !errors.Is(err, ErrEmptyLine) {
			t.Errorf("%q: %v", blank, err)
		}
	}
}

// TestInstructionCommand checks the session commands the stop verbs stand
// for, by driving a real session with them: an injected value reaches the
// output, and abort ends the run.
func TestInstructionCommand(t *testing.T) {
	for _, tc := range []struct {
		line   string
		action engine.Action
		move   Movement
	}{
		{"continue", engine.Proceed, Continue},
		{"next", engine.Proceed, Next},
		{"step", engine.Proceed, StepIn},
		{"out", engine.Proceed, StepOut},
		{`inject 1`, engine.Inject, Next},
		{`replace 1`, engine.Replace, Next},
		{`answer 1`, engine.Answer, Next},
		{"decline", engine.Decline, Next},
		{`edit {}`, engine.Edit, Next},
		{"approve", engine.Approve, Continue},
		{"deny", engine.Deny, Continue},
		{"abort", engine.Abort, Continue},
	} {
		in, _ := ParseCommand(tc.line)
		cmd, ok := in.Command()
		if !ok || cmd.Decision.Action != tc.action || cmd.Move != tc.move {
			t.Errorf("%s: %+v %v", tc.line, cmd, ok)
		}
	}
	for _, line := range []string{"quit", "break E1", "print x", "pause", "where"} {
		if in, _ := ParseCommand(line); func() bool { _, ok := in.Command(); return ok }() {
			t.Errorf("%s stands for a session command", line)
		}
	}

	s := newSession(t, chainPlan, "")
	s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil)
	s.Start(context.Background(), nil)
	in, err := ParseCommand(`inject {"n": 42}`)
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := in.Command()
	// The injected value stands for the step's run, so there is no
	// result stop: next goes on to the step after it.
	if st := do(t, s, cmd); where(st) != "step E1" {
		t.Fatalf("inject went on to %s, not to the next step", where(st))
	}
	in, _ = ParseCommand("c")
	cmd, _ = in.Command()
	if got := resultJSON(t, do(t, s, cmd)); got != `{"items":2,"n":42}` {
		t.Errorf("output %s", got)
	}

	s = newSession(t, chainPlan, "")
	s.Table().Set("E1/do.0/A", nil, nil)
	s.Start(context.Background(), nil)
	in, _ = ParseCommand("abort")
	cmd, _ = in.Command()
	if st := do(t, s, cmd); !st.Finished || st.Error == "" {
		t.Errorf("after abort: %s %s %q", where(st), st.Status, st.Error)
	}
}

// TestBreakSpec checks that a breakpoint set from a parsed line describes
// itself as that line's argument, for the lists both front ends show.
func TestBreakSpec(t *testing.T) {
	s := newSession(t, chainPlan, "")
	for _, line := range []string{"break E1/do.*/A step if {{item}} eq b", "break E2 result", "break **"} {
		in, err := ParseCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Table().Set(in.Pattern, in.Kinds, in.Condition)
		if err != nil {
			t.Fatal(err)
		}
		if got := "break " + b.Spec(); got != line {
			t.Errorf("spec %q, want %q", got, line)
		}
	}
}

// TestGrammar checks that every verb has one entry, that short forms are
// not shared, and that help can explain each.
func TestGrammar(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Grammar() {
		for _, w := range append([]string{string(s.Verb)}, s.Aliases...) {
			if seen[w] {
				t.Errorf("%s is used twice", w)
			}
			seen[w] = true
		}
		if s.Does == "" {
			t.Errorf("%s says nothing about what it does", s.Verb)
		}
		if in, err := ParseCommand("help " + string(s.Verb)); err != nil || in.Topic != s.Verb {
			t.Errorf("help %s: %v %v", s.Verb, in, err)
		}
	}
	if len(seen) != 41+9 {
		t.Errorf("%d words; a verb was added or lost without this test knowing", len(seen))
	}
}

// FuzzParseCommand checks that no line makes the parser panic, and that an
// instruction it reads writes back as a line that reads as the same
// instruction.
func FuzzParseCommand(f *testing.F) {
	for _, seed := range []string{
		"break E1/do.*/agent.2 round if {{stop.round}} gte 2",
		"break ** if {{item}} eq \"a  b\"",
		"cond 1 {{x}} contains if",
		`inject {"a": [1, 2.5e3, "\u00e9"]}`,
		`run {"k": null}`,
		"print {{E0.issues.0}}",
		"help break",
		"goto E1/do.3",
		"errors on",
		"b E1 if {{a}} if eq 1",
		"",
		"\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		in, err := ParseCommand(line)
		if err != nil {
			return
		}
		canon := in.String()
		again, err := ParseCommand(canon)
		if err != nil {
			t.Fatalf("%q read as %q, which does not parse: %v", line, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("%q read as %q, which reads back as %q", line, canon, again.String())
		}
	})
}
