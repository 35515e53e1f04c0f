package tui

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine"
)

// appendedStep is what the test editor appends to a plan file: a step S9
// at the end of its steps.
const appendedStep = "  - id: S9\n    tool_name: builtin__reshape\n    input: { shape: { edited: true } }\n"

// testEditor writes an editor for $EDITOR: a shell script that appends
// appendedStep to the file it is given, its last argument.
func testEditor(t *testing.T) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "editor.sh")
	text := "#!/bin/sh\nfor f; do :; done\nprintf '  - id: S9\\n    tool_name: builtin__reshape\\n    input: { shape: { edited: true } }\\n' >> \"$f\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestEditKey presses e: the workbench hands the terminal to $EDITOR on
// the plan's file and reloads the file when the editor exits.
func TestEditKey(t *testing.T) {
	editor := testEditor(t)
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", editor+" --wait")

	b := newBench(t, 120, 40)
	b.toDoc(docSimple)
	b.press(keyEdit)
	if len(b.execs) != 1 {
		t.Fatalf("e asked for %d programs, want 1", len(b.execs))
	}
	if argv := editorCommand(os.Getenv); len(argv) != 2 || argv[0] != editor || argv[1] != "--wait" {
		t.Fatalf("editor %q", argv)
	}
	b.runExec(0)
	wantNotice(t, b, ".stepwise/plans/simple.yaml edited: valid")
	treeLine(t, b.m.planPage.tree().View(), "S9  builtin__reshape")
	if n := len(b.m.planPage.document().Plan.Steps); n != 3 {
		t.Errorf("%d steps after the edit, want 3", n)
	}
	// The new step runs.
	b.press(keyRun)
	wantEnded(t, b, "ok")
	jsonEqual(t, node(t, b, "S9").Result, `{"edited": true}`)

	// An editor that fails says so, and the file is read again anyway.
	b.press(keyPlanView, editedMsg{doc: docSimple, err: errors.New("exit status 1")})
	wantNotice(t, b, "edited: valid")
	b.press(editedMsg{doc: docSimple, err: errors.New("exit status 1")})
	if !strings.Contains(b.m.notice.text, "edited") {
		t.Errorf("notice %q", b.m.notice.text)
	}
}

// TestEditUnchanged presses e with an editor that changes nothing: the
// workbench says the plan is unchanged, not that it was edited.
func TestEditUnchanged(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "true")
	b := newBench(t, 120, 40)
	b.toDoc(docSimple)
	b.press(keyEdit)
	if len(b.execs) != 1 {
		t.Fatalf("e asked for %d programs, want 1", len(b.execs))
	}
	b.runExec(0)
	wantNotice(t, b, ".stepwise/plans/simple.yaml unchanged")
}

// TestEditAtLine presses e on step S1 (line 8 of its file) with editors
// of each kind: a script named like the editor records the arguments it
// is run with, and each editor is asked for the line its own way; one not
// known gets the file alone.
func TestEditAtLine(t *testing.T) {
	cases := []struct {
		editor string // $EDITOR, the script's name first
		want   string // the arguments, one a line; FILE is the plan's file
	}{
		{"vi", "+8 FILE"},
		{"vim", "+8 FILE"},
		{"nvim", "+8 FILE"},
		{"nano", "+8 FILE"},
		{"emacs -nw", "-nw +8 FILE"},
		{"kak", "+8 FILE"},
		{"micro", "+8 FILE"},
		{"hx", "+8 FILE"},
		{"code -w", "-w --goto FILE:8"},
		{"subl -w", "-w FILE:8"},
		{"gedit", "FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.editor, func(t *testing.T) {
			dir := t.TempDir()
			name, flags, _ := strings.Cut(tc.editor, " ")
			script := filepath.Join(dir, name)
			if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/argv\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("VISUAL", "")
			t.Setenv("EDITOR", strings.TrimSpace(script+" "+flags))
			b := newBench(t, 120, 40)
			b.toDoc(docSimple)
			b.press(keyDown, keyDown) // S1
			wantScreen(t, b, "tool        builtin__reshape")
			b.press(keyEdit)
			b.runExec(0)
			argv, err := os.ReadFile(filepath.Join(dir, "argv"))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(strings.Join(strings.Fields(string(argv)), " "), b.p.planFile("simple"), "FILE")
			if got != tc.want {
				t.Errorf("the editor was run with %q, want %q", got, tc.want)
			}
			wantNotice(t, b, "simple.yaml unchanged")
		})
	}
}

// TestEditKeyNoEditor presses e with no editor to be found.
func TestEditKeyNoEditor(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	t.Setenv("PATH", t.TempDir())
	b := newBench(t, 120, 40)
	b.press(keyEdit)
	if len(b.execs) != 0 {
		t.Error("e ran a program")
	}
	wantNotice(t, b, "no editor: set $EDITOR (vi was not found either)")
}

func TestEditorCommand(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"VISUAL wins", map[string]string{"VISUAL": "code -w", "EDITOR": "nano"}, "code -w"},
		{"then EDITOR", map[string]string{"EDITOR": "nano -R"}, "nano -R"},
		{"blank VISUAL is not set", map[string]string{"VISUAL": "  ", "EDITOR": "ed"}, "ed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := editorCommand(func(k string) string { return tc.env[k] })
			if strings.Join(got, " ") != tc.want {
				t.Errorf("editor %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWatch changes a plan file behind the workbench's back: the watch
// reloads it; an unchanged file is left alone.
func TestWatch(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docSimple)
	b.press(watchMsg{})
	if b.m.notice.text != "" {
		t.Errorf("an unchanged file was reloaded: %q", b.m.notice.text)
	}
	writeTestFile(t, b.p.planFile("simple"), simplePlan+appendedStep)
	b.press(watchMsg{})
	wantNotice(t, b, ".stepwise/plans/simple.yaml changed on disk: valid")
	treeLine(t, b.m.planPage.tree().View(), "S9  builtin__reshape")

	// A plan not on show is reloaded too, and says so.
	writeTestFile(t, b.p.planFile("failing"), strings.Replace(failingPlan, "F1.x", "", 1)+"  - id: F9\n    tool_name: nosuch__tool\n    input: {}\n")
	b.press(watchMsg{})
	wantNotice(t, b, "failing.yaml changed on disk: ")
	if d := b.m.planPage.documentAt(docFailing); d.Report.OK() {
		t.Error("the broken plan has no problems")
	}
	wantDocument(t, b.m, docSimple)

	// A file that goes away is one problem, not a crash.
	if err := os.Remove(b.p.planFile("asking")); err != nil {
		t.Fatal(err)
	}
	b.press(watchMsg{})
	if d := b.m.planPage.documentAt(docAsking); d.Plan != nil || d.Report.OK() {
		t.Error("a removed plan still loads")
	}
}

// TestDetailAfterReload checks the detail pane shows the plan as it was
// read again, not as it was before.
func TestDetailAfterReload(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docSimple)
	b.press(keyDown, keyDown) // S1
	wantScreen(t, b, "tool        builtin__reshape")
	writeTestFile(t, b.p.planFile("simple"), strings.Replace(simplePlan, "    tool_name: builtin__reshape\n    input: { shape: { echo: \"{{S0.greeting}}\" } }", "    tool_name: user__lookup\n    input: { name: \"{{S0.other}}\" }", 1))
	b.press(keyValidate)
	wantNotice(t, b, "checked: valid")
	treeLine(t, b.m.planPage.tree().View(), "S1  user__lookup")
	wantScreen(t, b, "tool        user__lookup")
	// Who reads a step's result is worked out again too.
	b.press(keyUp)
	wantScreen(t, b, "S1 (line 10): {{S0.other}}")
}

// TestNewPlanKey presses N: the command line opens with "new " typed.
func TestNewPlanKey(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(keyNewPlan)
	if !b.m.cmdline.Active() || b.m.cmdline.Value() != "new " {
		t.Fatalf("command line %v %q", b.m.cmdline.Active(), b.m.cmdline.Value())
	}
	b.press(typeText("triage_two")...)
	b.press(keyEnter)
	file := filepath.Join(b.p.planDir, "triage_two.yaml")
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	if b.m.planPage.document().Name() != "triage_two" || b.m.runShown() {
		t.Fatalf("showing %s", b.m.planPage.document().Name())
	}
	wantNotice(t, b, "created .stepwise/plans/triage_two.yaml; e edits it, t adds a step for a tool")
	// The new plan has an input_schema: r asks for it, and it runs.
	b.press(keyRun)
	wantOverlay(t, b, overlayForm)
	b.press(typeText("plans")...)
	b.press(keySubmit)
	wantEnded(t, b, "ok")

	// From the run view too, with a run held.
	b2 := newBench(t, 120, 40)
	b2.debugTo(docSimple, "")
	b2.press(keyNewPlan)
	b2.press(typeText("other")...)
	b2.press(keyEnter)
	if b2.m.planPage.document().Name() != "other" || b2.m.runShown() {
		t.Errorf("showing %s, run view %v", b2.m.planPage.document().Name(), b2.m.runShown())
	}
	b2.press(keyNext)
	wantHeld(t, b2, "S0", "result", "next")
}

// TestToolsKey opens the catalog with t and inserts a step with enter.
// keyAddStep adds a step calling the tool selected in the catalog.
var keyAddStep = tea.KeyPressMsg{Code: 'a', Text: "a"}

func TestToolsKey(t *testing.T) {
	cases := []benchCase{
		{"t opens the catalog of every tool", func(b *bench) { b.toDoc(docSimple) }, seq(keyTools), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayCatalog)
			wantScreen(t, b, "Tools · 17", "builtin__reshape", "user__lookup", "plan__flow", "a add to simple")
		}},
		{"enter on a tool writes nothing, and says which key adds it", func(b *bench) { b.toDoc(docSimple) },
			seq(keyTools, keySearch, typeText("lookup"), keyEnter, keyEnter), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayCatalog)
				src, err := os.ReadFile(b.p.planFile("simple"))
				if err != nil {
					t.Fatal(err)
				}
				if string(src) != simplePlan {
					t.Errorf("enter changed the plan's file:\n%s", src)
				}
				wantScreen(t, b, "a adds a step calling user__lookup to simple's file")
			}},
		{"a while a run of the plan is held writes nothing, and the catalog stays to say why", func(b *bench) { b.debugTo(docSimple, "") },
			seq(keyTools, keyAddStep), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayCatalog)
				wantScreen(t, b, "a run of simple is held at a stop: steps are added once it ends")
				src, err := os.ReadFile(b.p.planFile("simple"))
				if err != nil {
					t.Fatal(err)
				}
				if string(src) != simplePlan {
					t.Errorf("a changed the file of the plan that runs:\n%s", src)
				}
				wantHeld(t, b, "S0", engine.StopStep, "entry")
			}},
		{"the catalog over a held run of the plan says why it adds no step, and the key bar its own keys", func(b *bench) { b.debugTo(docSimple, "") },
			seq(keyTools), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayCatalog)
				wantScreen(t, b, "a run of simple is held at a stop: steps are added once it ends")
				wantNoScreen(t, b, "a add to simple", "a abort")
				lines := strings.Split(strings.TrimRight(b.screen(), "\n"), "\n")
				if bar := lines[len(lines)-1]; !strings.Contains(bar, "/ filter · esc close") {
					t.Errorf("the key bar under the catalog reads %q, want the catalog's keys", bar)
				}
				b.press(keyEnter)
				wantNoScreen(t, b, "a adds a step")
			}},
		{"the key bar under the catalog offers a when a step can be added", func(b *bench) { b.toDoc(docSimple) },
			seq(keyTools), func(t *testing.T, b *bench) {
				lines := strings.Split(strings.TrimRight(b.screen(), "\n"), "\n")
				if bar := lines[len(lines)-1]; !strings.Contains(bar, "a add to simple · / filter · esc close") {
					t.Errorf("the key bar under the catalog reads %q, want the catalog's keys", bar)
				}
			}},
		{"a inserts a step calling the tool into the plan's file", func(b *bench) { b.toDoc(docSimple) },
			seq(keyTools, keySearch, typeText("lookup"), keyEnter, keyAddStep), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayNone)
				src, err := os.ReadFile(b.p.planFile("simple"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(src), "  - id: S2\n    tool_name: user__lookup\n") {
					t.Errorf("the file has no new step:\n%s", src)
				}
				wantNotice(t, b, "has a new step S2 calling user__lookup: valid")
				wantRow(t, b.m, 3, "S2")
				wantFocus(t, b.m, paneTree)
				treeLine(t, b.m.planPage.tree().View(), "S2  user__lookup")
			}},
		{"a control step goes in ready to run, its placeholders marked", func(b *bench) { b.toDoc(docSimple) },
			seq(keyTools, keySearch, typeText("map"), keyEnter, keyAddStep), func(t *testing.T, b *bench) {
				wantNotice(t, b, "has a new step S2 calling map: valid")
				src, err := os.ReadFile(b.p.planFile("simple"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(src), "  - id: S2\n    tool_name: map\n    input:\n      over: \"{{S1.items}}\"  # replace: ") {
					t.Errorf("the map does not go over the last step's result:\n%s", src)
				}
				treeLine(t, b.m.planPage.tree().View(), "S2  map")
			}},
		{"the filter narrows the list", func(b *bench) { b.toDoc(docSimple) }, seq(keyTools, keySearch, typeText("user__")), func(t *testing.T, b *bench) {
			wantScreen(t, b, "Tools · 3 of 17", "user__fail", "user__gate", "user__lookup")
			wantNoScreen(t, b, "builtin__reshape")
		}},
		{"t from the run view inserts into the plan and shows it", func(b *bench) { b.runToEnd(docSimple) },
			seq(keyTools, keyAddStep), func(t *testing.T, b *bench) {
				if b.m.runShown() {
					t.Error("still in the run view")
				}
				// The first tool listed is the exit control step.
				wantNotice(t, b, "has a new step S2 calling exit")
			}},
		{"esc closes the catalog", nil, seq(keyTools, keyEsc), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
		}},
		{"q closes the catalog, and does not quit", nil, seq(keyTools, keyQuit), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			if b.quit {
				t.Error("q quit")
			}
		}},
		{"q typed in the filter is text", nil, seq(keyTools, keySearch, keyQuit), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayCatalog)
			if b.m.panels.catalog.Filter() != "q" {
				t.Errorf("filter %q", b.m.panels.catalog.Filter())
			}
		}},
	}
	runCases(t, cases)
}

// TestCatalogFollowsFiles: plans and tools that come and go on disk are
// picked up live. A plan made with N joins the catalog at once, so a plan
// calling it as plan__ validates; a plan file added opens as a tab, one
// removed closes; a tool file added makes a plan calling it valid.
func TestCatalogFollowsFiles(t *testing.T) {
	b := newBench(t, 120, 40)
	b.m.followPlanFiles = true
	b.press(command("new callee")...)
	wantNotice(t, b, "created .stepwise/plans/callee.yaml")

	caller := filepath.Join(b.p.planDir, "caller.yaml")
	writeTestFile(t, caller, `identifier: caller
name: Caller
description: Calls the new plan and a tool that is not there yet.
steps:
  - id: C0
    tool_name: plan__callee
    input: { topic: "x" }
  - id: C1
    tool_name: user__later
    input: {}
`)
	b.press(watchMsg{})
	wantNotice(t, b, "opened .stepwise/plans/caller.yaml")
	i := slices.IndexFunc(b.m.planPage.open, func(o openPlan) bool { return o.tree.Document().Path == caller })
	if i < 0 {
		t.Fatal("the plan file added on disk has no tab")
	}
	problems := func() string {
		var out []string
		for _, p := range b.m.planPage.documentAt(i).Report.Problems {
			out = append(out, p.String())
		}
		return strings.Join(out, "; ")
	}
	if got := problems(); strings.Contains(got, "plan__callee") || !strings.Contains(got, "user__later") {
		t.Errorf("caller's problems: %s", got)
	}

	writeTestFile(t, filepath.Join(b.p.dir, ".stepwise", "tools", "later.yaml"), `name: later
description: Comes later.
kind: exec
command: sh
args: ["-c", "echo '{}'"]
output: json
input_schema: { type: object, properties: {} }
`)
	b.press(watchMsg{})
	if got := problems(); got != "" {
		t.Errorf("with the tool file there, caller's problems: %s", got)
	}

	n := b.m.planPage.count()
	if err := os.Remove(caller); err != nil {
		t.Fatal(err)
	}
	b.press(watchMsg{})
	wantNotice(t, b, "closed .stepwise/plans/caller.yaml (gone from disk)")
	if b.m.planPage.count() != n-1 {
		t.Errorf("%d tabs after the file went, want %d", b.m.planPage.count(), n-1)
	}

	// The plan of an ended run on show closes its tab at once, as any
	// other, and the plan page is shown.
	gone := filepath.Join(b.p.planDir, "gone.yaml")
	writeTestFile(t, gone, "identifier: gone\nname: Gone\ndescription: Goes.\nsteps:\n  - id: G0\n    tool_name: builtin__reshape\n    input: { shape: { ok: true } }\n")
	b.press(watchMsg{})
	i = slices.IndexFunc(b.m.planPage.open, func(o openPlan) bool { return o.tree.Document().Path == gone })
	b.m.planPage.show(i)
	b.press(keyRun)
	wantEnded(t, b, "ok")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	b.press(watchMsg{})
	if slices.ContainsFunc(b.m.planPage.open, func(o openPlan) bool { return o.tree.Document().Path == gone }) {
		t.Error("the removed plan's tab stays while its ended run is on show")
	}
	wantNotice(t, b, "closed .stepwise/plans/gone.yaml (gone from disk)")
	if b.m.runShown() || b.m.runPage.run != nil {
		t.Error("the run of the removed plan stays on show")
	}
}
