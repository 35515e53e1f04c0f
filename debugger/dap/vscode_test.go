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
	if !slices.Equal(d.ConfigurationAttributes.Launch.Required, []string{"program"}) {
		t.Errorf("required %v, want program", d.ConfigurationAttributes.Launch.Required)
	}
}
