package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brokenConfigs are configurations a project cannot be opened with, each
// with the error it fails with, where that error is, and what it says
// there.
var brokenConfigs = []struct {
	name      string
	config    string // "" makes config.toml a directory, which cannot be read
	message   string
	line, col int
	problem   string
}{
	{"does not parse", "[limits\nx=1\n", ".stepwise/config.toml:1:8: expected ']' to close table name", 1, 8,
		"expected ']' to close table name"},
	{"a value of the wrong type", "[limits]\ntool_output_bytes = \"big\"\n", ".stepwise/config.toml:2:21: limits.tool_output_bytes: expected an integer, found a string", 2, 21,
		"limits.tool_output_bytes: expected an integer, found a string"},
	{"cannot be read", "", ".stepwise/config.toml: read .stepwise/config.toml: is a directory", 0, 0,
		"read .stepwise/config.toml: is a directory"},
}

// brokenProject writes a project with one plan, p, whose config.toml is
// config, or a directory in its place when config is "".
func brokenProject(t *testing.T, config string) {
	t.Helper()
	files := map[string]string{"plans/p.yaml": "identifier: p\nsteps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { n: 1 } }\n"}
	if config != "" {
		files["config.toml"] = config
	}
	writeProject(t, files)
	if config == "" {
		if err := os.Mkdir(filepath.Join(".stepwise", "config.toml"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrokenConfigJSON: every command asked for JSON prints JSON on stdout
// when the project's configuration does not load: the error, where it is,
// exit 1, and the message on stderr as without --json.
func TestBrokenConfigJSON(t *testing.T) {
	commands := []struct {
		args []string
		// stream: the command writes one JSON object a line (debug
		// --json), so the failure is one line.
		stream bool
	}{
		{args: []string{"mcp", "list", "--json"}},
		{args: []string{"mcp", "test", "srv", "--json"}},
		{args: []string{"mcp", "tools", "--json"}},
		{args: []string{"mcp", "tools", "srv", "--json"}},
		{args: []string{"tools", "list", "--json"}},
		{args: []string{"tools", "show", "builtin__reshape", "--json"}},
		{args: []string{"models", "list", "--json"}},
		{args: []string{"models", "test", "--json"}},
		{args: []string{"runs", "--json"}},
		{args: []string{"inspect", "0123", "--json"}},
		{args: []string{"diff", "0123", "4567", "--json"}},
		{args: []string{"debug", "p", "--json"}, stream: true},
		{args: []string{"replay", "0123", "--debug", "--json"}, stream: true},
		{args: []string{"fork", "0123", "--from", "E0", "--debug", "--json"}, stream: true},
	}
	for _, broken := range brokenConfigs {
		t.Run(broken.name, func(t *testing.T) {
			brokenProject(t, broken.config)
			for _, c := range commands {
				name := strings.Join(c.args, " ")
				stdout, stderr, code := runCLI(t, c.args...)
				if code != exitFailure {
					t.Errorf("%s: exit %d, want %d", name, code, exitFailure)
				}
				if want := "stepwise: " + broken.message + "\n"; stderr != want {
					t.Errorf("%s: stderr\n%s\nwant\n%s", name, stderr, want)
				}
				if c.stream && strings.Count(stdout, "\n") != 1 {
					t.Errorf("%s: stdout is not one JSON line:\n%s", name, stdout)
				}
				var got failureJSON
				dec := json.NewDecoder(strings.NewReader(stdout))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&got); err != nil {
					t.Errorf("%s: stdout is not the failure as JSON (%v):\n%s", name, err, stdout)
					continue
				}
				want := failureJSON{Error: broken.message, File: ".stepwise/config.toml", Line: broken.line, Col: broken.col}
				if got != want {
					t.Errorf("%s: stdout says %+v, want %+v", name, got, want)
				}
			}
		})
	}
}

// TestBrokenConfigRunEnvelopes: run, replay and fork with --json give
// their own envelopes when the configuration does not load, with the
// error the other commands' JSON gives.
func TestBrokenConfigRunEnvelopes(t *testing.T) {
	brokenProject(t, brokenConfigs[0].config)
	for _, args := range [][]string{
		{"run", "p", "--json"},
		{"replay", "0123", "--json"},
		{"fork", "0123", "--from", "E0", "--json"},
	} {
		name := strings.Join(args, " ")
		stdout, stderr, code := runCLI(t, args...)
		if code != exitFailure {
			t.Errorf("%s: exit %d, want %d", name, code, exitFailure)
		}
		if want := "stepwise: " + brokenConfigs[0].message + "\n"; stderr != want {
			t.Errorf("%s: stderr\n%s\nwant\n%s", name, stderr, want)
		}
		var got struct{ Error string }
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Error != brokenConfigs[0].message {
			t.Errorf("%s: stdout is not an envelope with the error (%v):\n%s", name, err, stdout)
		}
	}
	_, stderr, code := runCLI(t, "run", "p", "--events", "jsonl")
	var line struct{ Kind, Message string }
	if err := json.Unmarshal([]byte(stderr), &line); err != nil || code != exitFailure || line.Kind != "error" || line.Message != brokenConfigs[0].message {
		t.Errorf("run --events jsonl: exit %d, stderr is not the error as a JSON line (%v):\n%s", code, err, stderr)
	}
}

// TestValidateBrokenConfig: validate --json gives a configuration that
// does not load an envelope of its own, its errors placed where they are,
// and each plan named one saying it was not checked; stderr says nothing.
func TestValidateBrokenConfig(t *testing.T) {
	for _, broken := range brokenConfigs {
		t.Run(broken.name, func(t *testing.T) {
			brokenProject(t, broken.config)
			configEnvelope := validationJSON{File: ".stepwise/config.toml", Problems: []problemJSON{
				{Message: broken.problem, Code: codeConfigError, File: ".stepwise/config.toml", Line: broken.line, Col: broken.col}}, Notes: []problemJSON{}}
			notChecked := func(name string) validationJSON {
				return validationJSON{File: name, Problems: []problemJSON{
					{Message: "not checked: the configuration does not load: " + broken.message, Code: codeConfigError}}, Notes: []problemJSON{}}
			}
			tests := []struct {
				args []string
				want []validationJSON
			}{
				{[]string{"validate", "--json"}, []validationJSON{configEnvelope}},
				{[]string{"validate", "--json", ".stepwise/plans/p.yaml", "p"}, []validationJSON{configEnvelope, notChecked(".stepwise/plans/p.yaml"), notChecked("p")}},
			}
			for _, tc := range tests {
				name := strings.Join(tc.args, " ")
				stdout, stderr, code := runCLI(t, tc.args...)
				if code != exitFailure || stderr != "" {
					t.Errorf("%s: exit %d, want %d, and stderr says:\n%s", name, code, exitFailure, stderr)
				}
				sameEnvelopes(t, name, stdout, tc.want)
			}
		})
	}
}

// sameEnvelopes checks that stdout, what validate --json printed, is the
// envelopes want.
func sameEnvelopes(t *testing.T, name, stdout string, want []validationJSON) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var got []validationJSON
	for dec.More() {
		var env validationJSON
		if err := dec.Decode(&env); err != nil {
			t.Fatalf("%s: stdout is not envelopes (%v):\n%s", name, err, stdout)
		}
		got = append(got, env)
	}
	gotJSON, _ := json.MarshalIndent(got, "", "  ")
	wantJSON, _ := json.MarshalIndent(want, "", "  ")
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("%s: envelopes\n%s\nwant\n%s", name, gotJSON, wantJSON)
	}
}

// TestValidateConfigWarnings: validate --json gives the configuration's
// warnings as notes of its own envelope, once, before the plans', each
// placed where it is as a problem is, so that an editor shows it in the
// file it is in.
func TestValidateConfigWarnings(t *testing.T) {
	plan := "identifier: p\nname: P\ndescription: One step.\nsteps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { n: 1 } }\n"
	warning := problemJSON{Message: "settings.nonsense: unknown key", Code: codeConfigWarning, File: ".stepwise/config.toml", Line: 2, Col: 1}
	planEnvelope := func(file string) validationJSON {
		return validationJSON{Plan: "p", File: file, Steps: 1, OK: true, Problems: []problemJSON{}, Notes: []problemJSON{}}
	}
	writeProject(t, map[string]string{"plans/p.yaml": plan, "config.toml": "[settings]\nnonsense = 1\n"})
	configEnvelope := validationJSON{File: ".stepwise/config.toml", OK: true, Problems: []problemJSON{}, Notes: []problemJSON{warning}}
	for _, tc := range []struct {
		args []string
		want []validationJSON
	}{
		{[]string{"validate", "--json"}, []validationJSON{configEnvelope, planEnvelope(".stepwise/plans/p.yaml")}},
		{[]string{"validate", "--json", "p", ".stepwise/plans/p.yaml"}, []validationJSON{configEnvelope, planEnvelope(".stepwise/plans/p.yaml"), planEnvelope(".stepwise/plans/p.yaml")}},
	} {
		name := strings.Join(tc.args, " ")
		stdout, stderr, code := runCLI(t, tc.args...)
		if code != exitOK || stderr != "" {
			t.Errorf("%s: exit %d, want 0, and stderr says:\n%s", name, code, stderr)
		}
		sameEnvelopes(t, name, stdout, tc.want)
	}

}

// TestDebugJSONNotFound: debug --json, and replay and fork with --debug
// --json, give a plan or a run they cannot find as the failure's JSON
// line, as they give a project that cannot be opened.
func TestDebugJSONNotFound(t *testing.T) {
	runProject(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"debug", "nothing", "--json"}, "nothing: no such file, and no plan with that identifier on the plan paths"},
		{[]string{"replay", "0123", "--debug", "--json"}, ""},
		{[]string{"fork", "0123", "--from", "E0", "--debug", "--json"}, ""},
	} {
		name := strings.Join(tc.args, " ")
		stdout, stderr, code := runCLI(t, tc.args...)
		var got failureJSON
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || strings.Count(stdout, "\n") != 1 || got.Error == "" {
			t.Errorf("%s: stdout is not the failure as one JSON line (%v):\n%s", name, err, stdout)
		}
		if tc.want != "" && got.Error != tc.want {
			t.Errorf("%s: error %q, want %q", name, got.Error, tc.want)
		}
		if code != exitFailure || stderr != "stepwise: "+got.Error+"\n" {
			t.Errorf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
	}
}
