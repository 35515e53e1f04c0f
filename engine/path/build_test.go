package path

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuilders(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Item("E1", 3), "E1/do.3"},
		{Item("E1/do.0/E10", 12), "E1/do.0/E10/do.12"},
		{Round("E1", 2), "E1/agent.2"},
		{Round("E1/do.3", 1), "E1/do.3/agent.1"},
		{Repair("E1/agent.2"), "E1/agent.2/repair"},
		{Judge("E1"), "E1/judge"},
		{Call("E1/agent.2", "tracker__get_issue", 1), "E1/agent.2/tracker__get_issue"},
		{Call("E1/agent.2", "tracker__get_issue", 2), "E1/agent.2/tracker__get_issue.2"},
		{Join("", "E1"), "E1"},
		{Join("E1", "then"), "E1/then"},
		{Static("E1/do.3/E10/do.12/agent.2"), "E1/do.*/E10/do.*/agent.2"},
		{Static("E1/agent.2/builtin__do.3x"), "E1/agent.2/builtin__do.3x"},
		{Static("E1/then/E10"), "E1/then/E10"},
		{Last("E1/do.3"), "do.3"},
		{Last("E1"), "E1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestCalls(t *testing.T) {
	tools := []string{"a__x", "b__y", "a__x", "a__x", "b__y"}
	got := Calls("E1/agent.1", len(tools), func(i int) string { return tools[i] })
	want := []string{"E1/agent.1/a__x", "E1/agent.1/b__y", "E1/agent.1/a__x.2", "E1/agent.1/a__x.3", "E1/agent.1/b__y.2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Calls = %q, want %q", got, want)
	}
}

func TestKindOf(t *testing.T) {
	for p, want := range map[string]Kind{
		"":                            KindRun,
		"E1":                          KindStep,
		"E1/then/E10":                 KindStep,
		"E1/else":                     KindStep,
		"E1/do.3":                     KindItem,
		"E1/do.3/E10":                 KindStep,
		"E1/do.x":                     KindStep,
		"E1/do.":                      KindStep,
		"E1/agent.2":                  KindRound,
		"E1/agent.2/linear__list":     KindCall,
		"E1/agent.2/linear__list.2":   KindCall,
		"E1/agent.2/repair":           KindRepair,
		"E1/judge":                    KindJudge,
		"E1/do.3/agent.2/tracker__go": KindCall,
	} {
		if got := KindOf(p); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestParentAndNumbers(t *testing.T) {
	if parent, last, ok := Parent("E1/do.3/agent.2"); parent != "E1/do.3" || last != "agent.2" || !ok {
		t.Errorf("Parent = %q %q %v", parent, last, ok)
	}
	if parent, last, ok := Parent("E1"); parent != "" || last != "E1" || ok {
		t.Errorf("Parent(E1) = %q %q %v", parent, last, ok)
	}
	if n, ok := ItemIndex("do.42"); n != 42 || !ok {
		t.Errorf("ItemIndex(do.42) = %d %v", n, ok)
	}
	if n, ok := RoundNumber("agent.7"); n != 7 || !ok {
		t.Errorf("RoundNumber(agent.7) = %d %v", n, ok)
	}
	for _, seg := range []string{"agent.", "agent.-1", "agent.1x", "agent", "do.2"} {
		if _, ok := RoundNumber(seg); ok {
			t.Errorf("RoundNumber(%q) accepted", seg)
		}
	}
}

func TestKindJSON(t *testing.T) {
	b, err := json.Marshal(struct{ K Kind }{KindCall})
	if err != nil || string(b) != `{"K":"tool"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back struct{ K Kind }
	if err := json.Unmarshal(b, &back); err != nil || back.K != KindCall {
		t.Fatalf("Unmarshal = %v, %v", back.K, err)
	}
	if err := json.Unmarshal([]byte(`{"K":"stepp"}`), &back); err == nil || !strings.Contains(err.Error(), "round") {
		t.Errorf("an unknown kind gave %v; want an error listing the kinds", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, p := range []string{"", "/E1", "E1/", "E1//do.3", "E1/do.*"} {
		if _, err := Parse(p); err == nil {
			t.Errorf("Parse(%q) accepted it", p)
		}
	}
}

// TestRoundTrip builds paths from every constructor, in every nesting,
// and checks that parsing and classifying them gives back what built them.
func TestRoundTrip(t *testing.T) {
	type built struct {
		path string
		kind Kind
	}
	level := []built{{"E1", KindStep}, {"E2/then/E20", KindStep}}
	for depth := 0; depth < 3; depth++ {
		var next []built
		for _, b := range level {
			if b.kind != KindStep && b.kind != KindItem {
				continue // only steps and items hold steps
			}
			next = append(next,
				built{Item(b.path, depth*7), KindItem},
				built{Round(b.path, depth+1), KindRound},
				built{Judge(b.path), KindJudge},
				built{Repair(Round(b.path, 2)), KindRepair},
				built{Call(Round(b.path, 3), "pack__tool", depth+1), KindCall},
				built{Join(b.path, "E9"), KindStep},
			)
		}
		for _, b := range next {
			segs, err := Parse(b.path)
			if err != nil {
				t.Fatalf("Parse(%q): %v", b.path, err)
			}
			if strings.Join(segs, "/") != b.path {
				t.Errorf("segments of %q join to %q", b.path, strings.Join(segs, "/"))
			}
			if got := KindOf(b.path); got != b.kind {
				t.Errorf("KindOf(%q) = %v, built as %v", b.path, got, b.kind)
			}
			if parent, last, _ := Parent(b.path); Join(parent, last) != b.path {
				t.Errorf("Parent then Join of %q gives %q", b.path, Join(parent, last))
			}
			if pat, err := Compile(Static(b.path)); err != nil || !pat.Match(b.path) {
				t.Errorf("Static(%q) = %q does not match it as a pattern", b.path, Static(b.path))
			}
		}
		level = next
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"E1", "E1/do.3/agent.2/tracker__get_issue.2", "E1//x", "/", "do.*", "E1/agent.2/repair"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs, err := Parse(p)
		if err != nil {
			return
		}
		if strings.Join(segs, "/") != p {
			t.Fatalf("segments of %q join to %q", p, strings.Join(segs, "/"))
		}
		parent, last, _ := Parent(p)
		if Join(parent, last) != p || last != segs[len(segs)-1] {
			t.Fatalf("Parent(%q) = %q, %q", p, parent, last)
		}
		static := Static(p)
		if len(Segments(static)) != len(segs) {
			t.Fatalf("Static(%q) = %q has a different number of segments", p, static)
		}
		if KindOf(p) == KindRun {
			t.Fatalf("KindOf(%q) is the run", p)
		}
		if n, ok := ItemIndex(last); ok && Item(parent, n) != p && parent != "" {
			// do.03 reads as item 3, which Item writes do.3: only
			// canonical spellings round-trip.
			if !strings.HasPrefix(last, "do.0") {
				t.Fatalf("item %q of %q rebuilds as %q", last, p, Item(parent, n))
			}
		}
	})
}
