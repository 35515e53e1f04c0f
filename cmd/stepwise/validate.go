package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/strict"
)

// The codes of validate's JSON that are about the project's
// configuration, each in the envelope of the file it is in and placed
// there: a note that carries one of its warnings, and a problem that says
// it does not load (also in the envelope of each plan it kept from being
// checked).
const (
	codeConfigWarning = "config_warning"
	codeConfigError   = "config_error"
)

func newValidateCommand(s *streams) *cobra.Command {
	var asJSON, explain bool
	cmd := &cobra.Command{
		Use:   "validate [PLAN...]",
		Short: "Check plans: structure, templates, references, tools",
		Long: "Check each PLAN (a file, or the identifier of a plan on the plan paths) at load time and\n" +
			"against this project's catalog, printing compiler-style lines on stderr, then a line per\n" +
			"plan that says how it fared and, for several, a summary. With no PLAN, in a project, every\n" +
			"plan on the project's plan paths is checked, as the workbench lists them. Exit 1 when any\n" +
			"plan has problems; notes never fail. With --json, one envelope per plan on stdout and\n" +
			"nothing on stderr: a plan not found is an envelope with that problem, and the configuration\n" +
			"has envelopes of its own, one per file, before its plans': its warnings placed as notes,\n" +
			"and when it does not load its errors placed as problems.",
		RunE: func(cmd *cobra.Command, args []string) error {
			// With --json everything goes in the envelopes, so that a
			// script reads stdout alone: a configuration's warnings
			// become notes of its file's envelope, written before the
			// next plan's, and a plan that cannot be found an envelope
			// with that problem.
			var warned []config.Diagnostic
			projects := workspaces{warnings: workspace.PrintWarnings(s.err)}
			if asJSON {
				projects.warnings = func(d config.Diagnostic) { warned = append(warned, d) }
			}
			defer projects.close()
			// writeConfig writes the envelopes of a configuration: its
			// errors when it does not load, and the warnings said since
			// the last envelope.
			writeConfig := func(errs []config.Diagnostic) error {
				for _, v := range configDocuments(errs, warned) {
					if err := writeValidation(s.out, v, explain); err != nil {
						return err
					}
				}
				warned = nil
				return nil
			}
			write := func(v workspace.Document) error {
				if err := writeConfig(nil); err != nil {
					return err
				}
				return writeValidation(s.out, v, explain)
			}
			// A configuration that does not load has its envelopes once,
			// however many of the plans named it keeps from being
			// checked.
			writtenConfigs := map[string]bool{}
			writeBroken := func(loadErr *config.LoadError) error {
				if writtenConfigs[loadErr.Error()] {
					return nil
				}
				writtenConfigs[loadErr.Error()] = true
				return writeConfig(loadErr.Diagnostics)
			}
			var loadErr *config.LoadError
			plansToCheck, err := validateTargets(&projects, args)
			switch {
			case asJSON && errors.As(err, &loadErr):
				if err := writeBroken(loadErr); err != nil {
					return err
				}
				return &exitCode{code: exitFailure}
			case err != nil:
				return err
			}
			failed := 0
			for _, target := range plansToCheck {
				v, err := target.load()
				switch {
				case err != nil && !asJSON:
					fmt.Fprintln(s.err, "stepwise:", err)
					failed++
					continue
				case errors.As(err, &loadErr):
					if err := writeBroken(loadErr); err != nil {
						return err
					}
					v = workspace.Document{File: target.name, Report: plans.Report{Problems: []plans.Problem{{Code: codeConfigError, Message: "not checked: the configuration does not load: " + err.Error()}}}}
				case err != nil:
					v = workspace.Document{File: target.name, Report: plans.Report{Problems: []plans.Problem{{Code: plans.CodeUnreadable, Message: err.Error()}}}}
				}
				if !v.Report.OK() {
					failed++
				}
				if !asJSON {
					printValidation(s.err, v, explain)
					printVerdict(s.err, v)
					continue
				}
				if err := write(v); err != nil {
					return err
				}
			}
			if !asJSON && len(plansToCheck) > 1 {
				if failed == 0 {
					fmt.Fprintf(s.err, "✓ %s, no problems\n", countNoun(len(plansToCheck), "plan", "plans"))
				} else {
					fmt.Fprintf(s.err, "✗ %s, %d with problems\n", countNoun(len(plansToCheck), "plan", "plans"), failed)
				}
			}
			if failed > 0 {
				return &exitCode{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a {plan, steps, ok, problems, notes} envelope per plan on stdout")
	cmd.Flags().BoolVar(&explain, "explain", false, "explain each agent step's strict-output eligibility under both rule sets")
	return cmd
}

// validateTarget is a plan validate checks: how it was named, and how it
// is found and loaded.
type validateTarget struct {
	name string
	load func() (workspace.Document, error)
}

// validateTargets are the plans validate checks: those args names, or
// with none, every plan on the plan paths of the working directory's
// project.
func validateTargets(projects *workspaces, args []string) ([]validateTarget, error) {
	var targets []validateTarget
	for _, arg := range args {
		targets = append(targets, validateTarget{name: arg, load: func() (workspace.Document, error) {
			_, v, err := projects.load(arg)
			return v, err
		}})
	}
	if len(args) > 0 {
		return targets, nil
	}
	here, err := projects.at("")
	if err != nil {
		// As it is: validate --json gives a configuration that does
		// not load an envelope.
		return nil, err
	}
	proj := here.Project()
	if proj.Root == "" {
		return nil, usageError{errors.New("validate needs a PLAN outside a project: a plan file, or the identifier of a plan on the plan paths (in a project, no PLAN checks all its plans)")}
	}
	files := here.PlanFiles()
	if len(files) == 0 {
		return nil, &exitCode{code: exitFailure, msg: fmt.Sprintf("no plans found on the plan paths of %s (%s)", proj.Root, strings.Join(proj.PlanPaths, ", "))}
	}
	for _, file := range files {
		targets = append(targets, validateTarget{name: here.DisplayPath(file), load: func() (workspace.Document, error) { return here.Load(file) }})
	}
	return targets, nil
}

// configDocuments are the envelopes of a configuration: one for each
// file its errors (errs, when it does not load) or its warnings are in,
// in the order they are first met, errors first (one that is in no file,
// such as an environment variable's, is in one of no file); each error a
// config_error problem and each warning a config_warning note, placed
// where it is.
func configDocuments(errs, warnings []config.Diagnostic) []workspace.Document {
	var docs []workspace.Document
	byFile := map[string]int{}
	doc := func(file string) *plans.Report {
		i, ok := byFile[file]
		if !ok {
			i = len(docs)
			byFile[file] = i
			docs = append(docs, workspace.Document{File: file})
		}
		return &docs[i].Report
	}
	placed := func(code string, d config.Diagnostic) plans.Problem {
		return plans.Problem{Code: code, Message: config.Diagnostic{Key: d.Key, Message: d.Message}.String(), Pos: d.Pos}
	}
	for _, d := range errs {
		r := doc(d.File)
		r.Problems = append(r.Problems, placed(codeConfigError, d))
	}
	for _, d := range warnings {
		r := doc(d.File)
		r.Notes = append(r.Notes, placed(codeConfigWarning, d))
	}
	return docs
}

// workspaces opens each project's workspace once, for the plans a command
// names: a plan file belongs to the project it sits in (the working
// directory's when it sits in none), an identifier to the working
// directory's project. Configuration warnings go to warnings, once per
// project.
type workspaces struct {
	warnings func(config.Diagnostic)
	open     map[string]*workspace.Workspace
}

// forPlan finds a plan, named by file or by identifier, and the workspace
// of the project it belongs to.
func (ws *workspaces) forPlan(arg string) (*workspace.Workspace, string, error) {
	info, statErr := os.Stat(arg)
	if statErr == nil && info.IsDir() {
		return nil, "", fmt.Errorf("%s is a directory; give the plan files in it (%s)", arg, filepath.Join(arg, "*.yaml"))
	}
	dir := ""
	if statErr == nil {
		dir = workspace.ProjectDirOf(arg)
	}
	w, err := ws.at(dir)
	if err != nil || statErr == nil {
		return w, arg, err
	}
	file, err := w.Locate(arg)
	return w, file, err
}

// at is the workspace of the project found from dir ("" for the working
// directory). Workspaces are kept by project, so that the working
// directory and a plan file's directory in one project (a fork's, a
// replay's) share one, and its configuration's warnings are said once.
func (ws *workspaces) at(dir string) (*workspace.Workspace, error) {
	key := workspace.ProjectRoot(dir)
	if key == "" {
		key = dir
	}
	if w, ok := ws.open[key]; ok {
		return w, nil
	}
	w, err := workspace.Open(dir, workspace.Options{Warnings: ws.warnings})
	if err != nil {
		return nil, err
	}
	if ws.open == nil {
		ws.open = map[string]*workspace.Workspace{}
	}
	ws.open[key] = w
	return w, nil
}

// load finds a plan and loads and validates it.
func (ws *workspaces) load(arg string) (*workspace.Workspace, workspace.Document, error) {
	w, file, err := ws.forPlan(arg)
	if err != nil {
		return nil, workspace.Document{}, err
	}
	d, err := w.Load(file)
	return w, d, err
}

// close closes every workspace opened, and returns the first error, which
// says the run store did not record everything.
func (ws *workspaces) close() error {
	var errs []error
	for _, w := range ws.open {
		errs = append(errs, w.Close())
	}
	ws.open = nil
	return errors.Join(errs...)
}

// printValidation writes the human report: one compiler-style line per
// problem and note, then the strict-output explanation when asked.
func printValidation(w io.Writer, v workspace.Document, explain bool) {
	for _, p := range v.Report.Problems {
		fmt.Fprintln(w, p.String())
	}
	for _, n := range v.Report.Notes {
		fmt.Fprintln(w, n.NoteString())
	}
	if explain && v.Plan != nil {
		printExplanation(w, v)
	}
}

// printVerdict writes the line that says how a plan fared: "✓ FILE: no
// problems", "✗ FILE: 2 problems, 1 note".
func printVerdict(w io.Writer, v workspace.Document) {
	notes := ""
	if len(v.Report.Notes) > 0 {
		notes = ", " + countNoun(len(v.Report.Notes), "note", "notes")
	}
	if v.Report.OK() {
		fmt.Fprintf(w, "✓ %s: no problems%s\n", v.File, notes)
		return
	}
	fmt.Fprintf(w, "✗ %s: %s%s\n", v.File, countNoun(len(v.Report.Problems), "problem", "problems"), notes)
}

func printExplanation(w io.Writer, v workspace.Document) {
	ex := plans.ExplainStrict(v.Plan)
	if len(ex) == 0 {
		fmt.Fprintf(w, "%s: no agent steps, so structured_output does not apply\n", v.File)
		return
	}
	for _, e := range ex {
		asked := "does not ask for structured_output: strict"
		if e.Requested {
			asked = "asks for structured_output: strict"
		}
		fmt.Fprintf(w, "%s: step %s %s\n", e.Pos, e.Path, asked)
		for _, rv := range e.Verdicts {
			verdict := "usable"
			if !rv.Verdict.Usable {
				verdict = "refused"
			}
			codes := make([]string, 0, len(rv.Verdict.Notes))
			for _, c := range rv.Verdict.Codes() {
				codes = append(codes, string(c))
			}
			line := fmt.Sprintf("  %-9s %s", ruleName(rv.Rules)+":", verdict)
			if len(codes) > 0 {
				line += " (" + strings.Join(codes, ", ") + ")"
			}
			fmt.Fprintln(w, line)
			for _, n := range rv.Verdict.Notes {
				mark := "caveat"
				if n.Refusal {
					mark = "refusal"
				}
				fmt.Fprintf(w, "    %s %s: %s\n", mark, n.Code, n.Message)
			}
		}
	}
}

func ruleName(r strict.Rules) string {
	if r == strict.Anthropic {
		return "Anthropic"
	}
	return "OpenAI"
}

// problemJSON is a problem or note in the validate envelope.
type problemJSON struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	Path    string `json:"path"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
}

type ruleVerdictJSON struct {
	Rules  string     `json:"rules"`
	Usable bool       `json:"usable"`
	Notes  []noteJSON `json:"notes"`
}

type noteJSON struct {
	Code     string `json:"code"`
	Refusal  bool   `json:"refusal"`
	Location string `json:"location"`
	Message  string `json:"message"`
}

type explanationJSON struct {
	Path      string            `json:"path"`
	Requested bool              `json:"requested"`
	Verdicts  []ruleVerdictJSON `json:"verdicts"`
}

// validationJSON is the validate --json envelope.
type validationJSON struct {
	Plan     string            `json:"plan"`
	File     string            `json:"file"`
	Steps    int               `json:"steps"`
	OK       bool              `json:"ok"`
	Problems []problemJSON     `json:"problems"`
	Notes    []problemJSON     `json:"notes"`
	Strict   []explanationJSON `json:"strict,omitempty"`
}

func toProblemsJSON(ps []plans.Problem) []problemJSON {
	out := make([]problemJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, problemJSON{Message: p.Message, Code: p.Code, Path: p.Path, File: p.Pos.File, Line: p.Pos.Line, Col: p.Pos.Col})
	}
	return out
}

func writeValidation(w io.Writer, v workspace.Document, explain bool) error {
	env := validationJSON{
		File:     v.File,
		OK:       v.Report.OK(),
		Problems: toProblemsJSON(v.Report.Problems),
		Notes:    toProblemsJSON(v.Report.Notes),
	}
	if v.Plan != nil {
		env.Plan = v.Plan.Identifier.Value
		env.Steps = len(v.Plan.Steps)
		if explain {
			env.Strict = []explanationJSON{}
			for _, e := range plans.ExplainStrict(v.Plan) {
				ej := explanationJSON{Path: e.Path, Requested: e.Requested}
				for _, rv := range e.Verdicts {
					rj := ruleVerdictJSON{Rules: rv.Rules.String(), Usable: rv.Verdict.Usable, Notes: []noteJSON{}}
					for _, n := range rv.Verdict.Notes {
						rj.Notes = append(rj.Notes, noteJSON{Code: string(n.Code), Refusal: n.Refusal, Location: n.Location, Message: n.Message})
					}
					ej.Verdicts = append(ej.Verdicts, rj)
				}
				env.Strict = append(env.Strict, ej)
			}
		}
	}
	return writeJSON(w, env)
}
