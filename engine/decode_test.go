package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// everyKind is a plan whose run emits every kind of event: an agent whose
// first round calls a tool and streams text, whose answer fails its schema
// and whose repair fails too, so that it settles with a warning; a decide
// on a gate; an ask nobody answers.
const everyKind = `
identifier: every
input_schema:
  type: object
  properties: { topic: { type: string, default: bugs } }
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the {{input.topic}}."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
      validation_exhaustion: { threshold: 1, mode: default, default_output: { count: -1 } }
  - id: E2
    tool_name: decide
    input:
      if: { value: "{{E1.output.count}}", op: eq, to: -1 }
      then: { tool_name: builtin__reshape, input: { shape: { settled: true } } }
  - id: E3
    tool_name: ask
    input:
      prompt: "Ship it?"
      output_schema: { type: object, required: [ship], properties: { ship: { type: boolean } } }
      when_unanswered: default
      default: { ship: false }
  - id: E4
    tool_name: map
    input:
      over: [1, 2]
      do: { tool_name: builtin__reshape, input: { shape: { n: "{{item}}" } } }
`

const everyKindReplies = `
replies:
  - match: E1
    reply:
      text: "Let me look."
      reasoning: "A reshape will do."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
      usage: { input_tokens: 120, output_tokens: 12 }
  - match: E1
    reply: { json: { count: "three" }, usage: { input_tokens: 200, output_tokens: 8 } }
  - match: E1
    role: repair
    reply: { json: { count: "still three" }, usage: { input_tokens: 30, output_tokens: 6 } }
`

// TestDecodePayloadRoundTrip records a real run into a real store file and
// reads every stored event back: each must decode to the type a sink saw
// live, holding what that payload holds once written as JSON.
func TestDecodePayloadRoundTrip(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": everyKind, "replies.yaml": everyKindReplies})
	cfg, _, err := config.Load(config.Options{Dir: p.dir})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(p.dir, ".stepwise", "plans", "p.yaml")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	plan, report := plans.Load(file, src, plans.Stepwise)
	if !report.OK() {
		t.Fatalf("plan does not load: %v", report.Problems)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cat := tools.Load(cfg)
	rt := tools.NewRuntime(cfg, cat)
	defer rt.Close()
	rec, live := st.Recorder(), &recorded{}
	res, err := engine.New(engine.Options{Config: cfg, Catalog: cat, Tools: rt,
		Models: model.New(cfg, model.Options{Backoff: noBackoff}), Sinks: []engine.Sink{rec, live}}).
		Run(context.Background(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusOK {
		t.Fatalf("the run ended %s: %v", res.Status, res.Err)
	}

	stored, err := st.Events(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(live.events) {
		t.Fatalf("%d events stored, %d emitted", len(stored), len(live.events))
	}
	seen := map[engine.EventKind]bool{}
	for i, s := range stored {
		e := live.events[i]
		if s.Seq != e.Seq || s.Kind != e.Kind || s.Path != e.Path || !s.Time.Equal(e.Time) {
			t.Fatalf("stored event %d is %d %s %q %v, emitted %d %s %q %v", i, s.Seq, s.Kind, s.Path, s.Time, e.Seq, e.Kind, e.Path, e.Time)
		}
		got, err := engine.DecodePayload(s.Kind, s.Payload)
		if err != nil {
			t.Fatalf("event %d (%s at %q): %v", s.Seq, s.Kind, s.Path, err)
		}
		if gt, lt := reflect.TypeOf(got), reflect.TypeOf(e.Payload); gt != lt {
			t.Fatalf("event %d (%s): decoded a %v, the engine emitted a %v", s.Seq, s.Kind, gt, lt)
		}
		if want := asWritten(t, e.Payload); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d (%s at %q):\n got %#v\nwant %#v", s.Seq, s.Kind, s.Path, got, want)
		}
		seen[s.Kind] = true
	}
	for _, k := range []engine.EventKind{engine.EventRunStart, engine.EventRunEnd, engine.EventStepStart, engine.EventStepEnd,
		engine.EventToolStart, engine.EventToolEnd, engine.EventModelCall, engine.EventModelDelta, engine.EventRepair,
		engine.EventGate, engine.EventAsk, engine.EventWarning, engine.EventUsage, engine.EventItems} {
		if !seen[k] {
			t.Errorf("the run emitted no %s event, so its decoding went untested", k)
		}
	}
}

// asWritten is a payload as it reads back from its JSON into its own
// type: what decoding the stored payload must give.
func asWritten(t *testing.T, payload any) any {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.New(reflect.TypeOf(payload))
	if err := json.Unmarshal(b, v.Interface()); err != nil {
		t.Fatal(err)
	}
	return v.Elem().Interface()
}

// TestDecodePayloadRefuses checks the payloads that cannot be read: an
// unknown kind names itself, and a payload that is not its kind's JSON says
// which kind it was read as. An empty payload is the kind's zero value.
func TestDecodePayloadRefuses(t *testing.T) {
	cases := []struct {
		name string
		kind engine.EventKind
		raw  string
		want string // in the error; empty for none
		zero any
	}{
		{name: "unknown kind", kind: "telepathy", raw: `{}`, want: `"telepathy"`},
		{name: "wrong shape", kind: engine.EventStepEnd, raw: `{"status": 7}`, want: "step_end payload"},
		{name: "not JSON", kind: engine.EventGate, raw: `{verdict`, want: "gate payload"},
		{name: "empty", kind: engine.EventWarning, raw: ``, zero: engine.Warning{}},
		{name: "null", kind: engine.EventModelDelta, raw: `null`, zero: chat.Delta{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := engine.DecodePayload(tc.kind, json.RawMessage(tc.raw))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "" && !reflect.DeepEqual(got, tc.zero):
				t.Errorf("decoded %#v, want %#v", got, tc.zero)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one that says %s", err, tc.want)
			}
		})
	}
}
