package dap

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestVSCodeExtension: the extension's launch attributes are the launch
// request's arguments (noDebug is the editor's own), it allows
// breakpoints in YAML files, and it starts `stepwise dap` from PATH: a
// runtime with no program, since VS Code resolves a program against the
// extension's folder.
func TestVSCodeExtension(t *testing.T) {
	b, err := os.ReadFile("vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var ext struct {
		Contributes struct {
			Breakpoints []struct{ Language string }
			Debuggers   []struct {
				Type                    string
				Runtime                 string
				RuntimeArgs             []string
				Program                 *string
				ConfigurationSnippets   []struct{ Body map[string]any }
				ConfigurationAttributes struct {
					Launch struct {
						Required   []string
						Properties map[string]struct{ Description string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &ext); err != nil {
		t.Fatalf("vscode/package.json: %v", err)
	}
	if len(ext.Contributes.Breakpoints) != 1 || ext.Contributes.Breakpoints[0].Language != "yaml" {
		t.Errorf("breakpoints %+v, want YAML files", ext.Contributes.Breakpoints)
	}
	if len(ext.Contributes.Debuggers) != 1 {
		t.Fatalf("%d debuggers contributed, want the stepwise one", len(ext.Contributes.Debuggers))
	}
	d := ext.Contributes.Debuggers[0]
	if d.Type != "stepwise" || d.Runtime != "stepwise" || !slices.Equal(d.RuntimeArgs, []string{"dap"}) || d.Program != nil {
		t.Errorf("the debugger %+v does not start `stepwise dap` from PATH", d)
	}
	var want []string
	lt := reflect.TypeFor[launch]()
	for i := range lt.NumField() {
		if tag := lt.Field(i).Tag.Get("json"); tag != "noDebug" {
			want = append(want, tag)
		}
	}
	var got []string
	for name, p := range d.ConfigurationAttributes.Launch.Properties {
		got = append(got, name)
		if strings.TrimSpace(p.Description) == "" {
			t.Errorf("launch attribute %s has no description", name)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the extension's launch attributes are %v, the launch request's %v", got, want)
	}
	// A replay or a fork takes its plan from its record: no attribute is
	// required of every launch.
	if len(d.ConfigurationAttributes.Launch.Required) != 0 {
		t.Errorf("required %v, want none", d.ConfigurationAttributes.Launch.Required)
	}
	// A snippet for each kind of launch: a plan, a replay, a fork.
	for _, kind := range []string{"program", "replay", "fork"} {
		if !slices.ContainsFunc(d.ConfigurationSnippets, func(s struct{ Body map[string]any }) bool { _, ok := s.Body[kind]; return ok }) {
			t.Errorf("no configuration snippet launches with %s", kind)
		}
	}
	if p := d.ConfigurationAttributes.Launch.Properties; !strings.Contains(p["inputs"].Description, "input_schema") || !strings.Contains(p["cwd"].Description, "paths in messages") {
		t.Errorf("the inputs and cwd descriptions do not say what the README does: %+v", p)
	}
}
