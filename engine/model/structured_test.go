package model

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/plans"
)

// schemaOf compiles a JSON Schema written as JSON text.
func schemaOf(t *testing.T, text string) *plans.Schema {
	t.Helper()
	var raw any
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		t.Fatal(err)
	}
	c, err := plans.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &plans.Schema{Raw: raw, Compiled: c}
}

const triageSchema = `{
  "type": "object",
  "required": ["severity", "count"],
  "additionalProperties": false,
  "properties": {
    "severity": {"enum": ["sev1", "sev2", "sev3"]},
    "count": {"type": "integer"}
  }
}`

func TestStructured(t *testing.T) {
	tests := []struct {
		name    string
		replies string
		want    string   // the value as JSON, or "error: ..." for a *StructuredError's text
		roles   []string // the roles of the calls made, "+repair" marking the repair pass
	}{
		{
			name:    "valid the first time",
			replies: "replies:\n  - {match: E1, reply: {json: {severity: sev1, count: 3}}}\n",
			want:    `{"count":3,"severity":"sev1"}`,
			roles:   []string{"chat"},
		},
		{
			name:    "a fenced block and whitespace are tolerated",
			replies: "replies:\n  - match: E1\n    reply:\n      text: \"\\n```json\\n{\\\"severity\\\": \\\"sev2\\\", \\\"count\\\": 12345678901234567890}\\n```\\n\"\n",
			want:    `{"count":12345678901234567890,"severity":"sev2"}`,
			roles:   []string{"chat"},
		},
		{
			name: "repaired",
			replies: `replies:
  - {match: E1, reply: {json: {severity: critical, count: 3}}}
  - {match: E1, role: repair, reply: {json: {severity: sev1, count: 3}}}
`,
			want:  `{"count":3,"severity":"sev1"}`,
			roles: []string{"chat", "repair+repair"},
		},
		{
			name: "prose around JSON is repaired, not guessed through",
			replies: `replies:
  - {match: E1, reply: {text: 'Here you go: {"severity": "sev1", "count": 1}'}}
  - {match: E1, role: repair, reply: {json: {severity: sev1, count: 1}}}
`,
			want:  `{"count":1,"severity":"sev1"}`,
			roles: []string{"chat", "repair+repair"},
		},
		{
			name: "still invalid after repair",
			replies: `replies:
  - {match: E1, reply: {json: {severity: critical, count: 3}}}
  - {match: E1, role: repair, reply: {json: {severity: critical, count: 2.5}}}
`,
			want:  `error: the answer does not match the output schema after one repair pass: /count: got number, want integer; /severity: value must be one of 'sev1', 'sev2', 'sev3'`,
			roles: []string{"chat", "repair+repair"},
		},
		{
			name: "still not JSON after repair",
			replies: `replies:
  - {match: E1, reply: {text: "sev1, 3"}}
  - {match: E1, role: repair, reply: {text: "{\"severity\": \"sev1\""}}
`,
			want:  `error: the answer does not match the output schema after one repair pass: the answer is not JSON: unexpected EOF`,
			roles: []string{"chat", "repair+repair"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scriptModels(t, tt.replies, Options{})
			var calls []CallRecord
			v, err := m.Structured(context.Background(), "", chat.Request{Step: "E1", Role: "chat", Messages: user("triage it")},
				schemaOf(t, triageSchema), Hooks{OnCall: func(c CallRecord) { calls = append(calls, c) }})
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				var se *StructuredError
				if !errors.As(err, &se) || !se.Repaired {
					t.Fatalf("error %v is not a repaired *StructuredError", err)
				}
				if err.Error() != want {
					t.Errorf("error:\n%s\nwant:\n%s", err, want)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(v)
				if string(got) != tt.want {
					t.Errorf("value %s, want %s", got, tt.want)
				}
			}
			var roles []string
			for _, c := range calls {
				r := c.Role
				if c.Repair {
					r += "+repair"
				}
				roles = append(roles, r)
				if c.Err != nil || c.Reply.Provider != ScriptProviderName || c.Request.Format == nil || c.Request.Format.Name != "answer" || c.Request.Format.Strict {
					t.Errorf("call record %+v", c)
				}
			}
			if !reflect.DeepEqual(roles, tt.roles) {
				t.Errorf("calls %v, want %v", roles, tt.roles)
			}
		})
	}
}

// TestRepairRequest pins what the repair pass is told: the schema, the
// refused answer and one problem a line, for the same step.
func TestRepairRequest(t *testing.T) {
	m := scriptModels(t, `replies:
  - {match: E1, reply: {json: {severity: critical}}}
  - {match: E1, role: repair, reply: {json: {severity: sev1, count: 0}}}
`, Options{})
	var calls []CallRecord
	_, err := m.Structured(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("x"), Format: &chat.ResponseFormat{Name: "triage"}},
		schemaOf(t, triageSchema), Hooks{OnCall: func(c CallRecord) { calls = append(calls, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	rep := calls[1].Request
	if rep.Step != "E1" || rep.Role != RoleRepair || rep.Format == nil || rep.Format.Name != "triage" || len(rep.Messages) != 2 || rep.Messages[0].Role != "system" {
		t.Fatalf("repair request %+v", rep)
	}
	body := rep.Messages[1].Text()
	for _, want := range []string{
		"The schema:\n{\n  \"additionalProperties\": false,",
		"The answer:\n{\"severity\":\"critical\"}\n",
		"What is wrong with it:\n- /: missing property 'count'\n- /severity: value must be one of 'sev1', 'sev2', 'sev3'\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("repair message lacks %q:\n%s", want, body)
		}
	}
}

func TestStructuredPlainText(t *testing.T) {
	m := scriptModels(t, "replies:\n  - {match: E1, role: solver, reply: {text: \"not { json\"}}\n", Options{})
	calls := 0
	v, err := m.Structured(context.Background(), "solver", chat.Request{Step: "E1", Messages: user("x")}, nil, Hooks{OnCall: func(CallRecord) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, map[string]any{"text": "not { json"}) || calls != 1 {
		t.Errorf("value %v after %d calls", v, calls)
	}
}

// TestStructuredCallError checks that a failed call is recorded and its
// error returned as it is, not as a schema failure.
func TestStructuredCallError(t *testing.T) {
	m := scriptModels(t, "replies: []\n", Options{})
	var calls []CallRecord
	_, err := m.Structured(context.Background(), "judge", chat.Request{Step: "E2", Messages: user("x")}, schemaOf(t, triageSchema),
		Hooks{OnCall: func(c CallRecord) { calls = append(calls, c) }})
	var nr *NoReplyError
	if !errors.As(err, &nr) {
		t.Fatalf("error %v", err)
	}
	if len(calls) != 1 || calls[0].Err == nil || calls[0].Role != RoleJudge {
		t.Errorf("calls %+v", calls)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name    string
		replies string
		verdict bool
		reason  string
		err     string
		calls   int
	}{
		{
			name:    "yes",
			replies: "replies:\n  - {match: E1, role: judge, reply: {json: {verdict: true, reason: all green}}}\n",
			verdict: true, reason: "all green", calls: 1,
		},
		{
			name: "repaired",
			replies: `replies:
  - {match: E1, role: judge, reply: {json: {verdict: "no", reason: two open}}}
  - {match: E1, role: repair, reply: {json: {verdict: false, reason: two open}}}
`,
			verdict: false, reason: "two open", calls: 2,
		},
		{
			name: "extra fields are refused",
			replies: `replies:
  - {match: E1, role: judge, reply: {json: {verdict: true, reason: x, score: 1}}}
  - {match: E1, role: repair, reply: {json: {verdict: true}}}
`,
			err:   "the answer does not match the output schema after one repair pass: /: missing property 'reason'",
			calls: 2,
		},
		{
			name:    "a chat reply does not answer a judge call",
			replies: "replies:\n  - {match: E1, reply: {json: {verdict: true, reason: x}}}\n",
			err:     `script: no reply left for step "E1" in role judge`,
			calls:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scriptModels(t, tt.replies, Options{})
			calls := 0
			verdict, reason, err := m.Verdict(context.Background(), "", chat.Request{Step: "E1", Messages: user("is it done?")}, Hooks{OnCall: func(CallRecord) { calls++ }})
			if tt.err != "" {
				wantError(t, err, tt.err)
			} else if err != nil || verdict != tt.verdict || reason != tt.reason {
				t.Errorf("verdict %v %q, error %v", verdict, reason, err)
			}
			if calls != tt.calls {
				t.Errorf("%d calls, want %d", calls, tt.calls)
			}
		})
	}
}

func TestParseAnswer(t *testing.T) {
	tests := []struct{ text, want string }{
		{`{"a": 1}`, `{"a":1}`},
		{"  \n[1, 2]\n ", `[1,2]`},
		{"```json\n{\"a\": true}\n```", `{"a":true}`},
		{"```json {\"a\": true}```", `{"a":true}`},
		{"```\n{\"a\": 1}\n```", "error: the answer is not JSON: invalid character '`'"},
		{"```json\n{}\n```\n```json\n{}\n```", "error: the answer is not JSON"},
		{"{} {}", "error: the answer is not JSON: more text follows the JSON value"},
		{"Sure! {}", "error: the answer is not JSON: invalid character 'S'"},
		{"", "error: the answer is empty; expected a JSON value"},
		{"```json\n```", "error: the answer is empty"},
	}
	for _, tt := range tests {
		v, err := ParseAnswer(tt.text)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			raw, _ := json.Marshal(v)
			got = string(raw)
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("ParseAnswer(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func TestStructuredBeforeRepair(t *testing.T) {
	const replies = `
replies:
  - {match: E1, reply: {json: {severity: medium, count: 1}}}
  - {match: E1, role: repair, reply: {json: {severity: sev2, count: 1}}}
`
	tests := []struct {
		name      string
		decide    func(answer string, problems []string) (any, bool, error)
		want      string
		wantCalls int
	}{
		{"let the pass run", func(string, []string) (any, bool, error) { return nil, false, nil }, `{"count":1,"severity":"sev2"}`, 2},
		{"replace the repair", func(string, []string) (any, bool, error) {
			return map[string]any{"severity": "sev3", "count": 0}, true, nil
		}, `{"count":0,"severity":"sev3"}`, 1},
		{"a replacement off the schema", func(string, []string) (any, bool, error) {
			return map[string]any{"severity": "loud"}, true, nil
		}, "error", 1},
		{"stop", func(string, []string) (any, bool, error) { return nil, false, errors.New("aborted") }, "error", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scriptModels(t, replies, Options{})
			calls := 0
			var seen []string
			v, err := m.Structured(context.Background(), "", chat.Request{Step: "E1", Role: "chat", Messages: user("x")}, schemaOf(t, triageSchema), Hooks{
				OnCall: func(CallRecord) { calls++ },
				BeforeRepair: func(answer string, problems []string) (any, bool, error) {
					seen = problems
					return tt.decide(answer, problems)
				},
			})
			if len(seen) == 0 || !strings.Contains(seen[0], "/severity") {
				t.Errorf("BeforeRepair saw %v", seen)
			}
			if calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
			if tt.want == "error" {
				if err == nil {
					t.Fatalf("no error; got %v", v)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(v)
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
