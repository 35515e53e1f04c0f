package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/strict"
)

func newValidateCommand(s *streams) *cobra.Command {
	var asJSON, explain bool
	cmd := &cobra.Command{
		Use:   "validate PLAN...",
		Short: "Check plans: structure, templates, references, tools",
		Long: "Check each PLAN (a file, or the identifier of a plan on the plan paths) at load time and\n" +
			"against this project's catalog, printing compiler-style lines on stderr. Exit 1 when any\n" +
			"plan has problems; notes never fail. With --json, one envelope per plan on stdout.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("validate needs at least one PLAN: a plan file, or the identifier of a plan on the plan paths")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			projects := projectsByDir{w: s.err}
			failed := false
			for _, arg := range args {
				v, err := projects.validate(arg)
				if err != nil {
					fmt.Fprintln(s.err, "stepwise:", err)
					failed = true
					continue
				}
				if !v.report.OK() {
					failed = true
				}
				if asJSON {
					if err := writeValidation(s.out, v, explain); err != nil {
						return err
					}
				}
				printValidation(s.err, v, explain)
			}
			if failed {
				return &exitCode{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a {plan, steps, ok, problems, notes} envelope per plan on stdout")
	cmd.Flags().BoolVar(&explain, "explain", false, "explain each agent step's strict-output eligibility under both rule sets")
	return cmd
}

// validation is the outcome of validating one plan.
type validation struct {
	file   string
	plan   *plans.Plan // nil when the file does not parse
	report plans.Report
}

// projectsByDir opens each project once: a plan file is checked against the
// project it sits in (the working directory's when it sits in none), an
// identifier against the project of the working directory.
type projectsByDir struct {
	w    io.Writer
	open map[string]*project
}

func (ps *projectsByDir) project(dir string) (*project, error) {
	if p, ok := ps.open[dir]; ok {
		return p, nil
	}
	p, err := openProject(dir, ps.w)
	if err != nil {
		return nil, err
	}
	if ps.open == nil {
		ps.open = map[string]*project{}
	}
	ps.open[dir] = p
	return p, nil
}

// validate validates one plan, named by file or by identifier.
func (ps *projectsByDir) validate(arg string) (*validation, error) {
	proj, file, err := ps.locate(arg)
	if err != nil {
		return nil, err
	}
	return validatePlan(proj, file)
}

// locate finds a plan, named by file or by identifier, and the project it
// belongs to. A plan the catalog skipped or hid is found from its file all
// the same: it is exactly the plan that needs looking at.
func (ps *projectsByDir) locate(arg string) (*project, string, error) {
	info, statErr := os.Stat(arg)
	if statErr == nil && info.IsDir() {
		return nil, "", fmt.Errorf("%s is a directory; give the plan files in it (%s)", arg, filepath.Join(arg, "*.yaml"))
	}
	if statErr == nil {
		// A file inside a project belongs to that project; a file outside
		// any, to the project of the working directory.
		dir := ""
		if _, inProject := config.FindProject(filepath.Dir(arg)); inProject {
			dir = filepath.Dir(arg)
		}
		proj, err := ps.project(dir)
		if err != nil {
			return nil, "", err
		}
		return proj, arg, nil
	}
	proj, err := ps.project("")
	if err != nil {
		return nil, "", err
	}
	if e, ok := proj.catalog.Plan(arg); ok {
		return proj, e.File, nil
	}
	if file, ok := proj.catalog.SkippedPlan(arg); ok {
		return proj, file, nil
	}
	return nil, "", fmt.Errorf("%s: no such file, and no plan with that identifier on the plan paths", arg)
}

// validatePlan runs both layers of validation on one plan file.
func validatePlan(proj *project, file string) (*validation, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	real := file
	file = proj.displayPath(file)
	p, r := plans.Load(file, src, proj.catalog.Dialect)
	if p != nil {
		resolved := proj.catalog.Resolve(p)
		for i := range resolved.Problems {
			resolved.Problems[i].Message = proj.displayText(resolved.Problems[i].Message)
		}
		r.Merge(resolved)
		r.Notes = append(r.Notes, catalogNotes(proj, p, real)...)
		r.Sort()
	}
	return &validation{file: file, plan: p, report: r}, nil
}

// catalogNotes are what the catalog knows about a plan beyond its tools:
// that another file defines the same identifier first, that its plan__
// calls lead back to it, and the notes of the user tools' files it calls
// (placed in those files). file is the plan's path as the file system knows
// it, not as it is shown: the workbench shows paths relative to the
// project, which need not be the working directory.
func catalogNotes(proj *project, p *plans.Plan, file string) []plans.Problem {
	var notes []plans.Problem
	id := p.Identifier.Value
	if e, ok := proj.catalog.Plan(id); ok && !sameFile(e.File, file) {
		notes = append(notes, plans.Problem{Code: plans.CodeShadowedPlan, Pos: p.Identifier.Pos,
			Message: fmt.Sprintf("plan '%s' is also defined by %s, which comes first on the plan paths: plan__%s runs that one, not this file", id, proj.displayPath(e.File), id)})
	}
	if chain := proj.catalog.CallCycle(p); chain != nil {
		n := plans.Problem{Code: plans.CodePlanCycle, Pos: p.Pos,
			Message: fmt.Sprintf("plan calls lead back to this plan: %s; such a call fails when a run reaches it", strings.Join(chain, " → "))}
		plans.WalkSteps(p, func(s *plans.Step) {
			if n.Path == "" && s.ToolName.Value == "plan__"+chain[1] {
				n.Path, n.Pos = s.Path, s.ToolName.Pos
			}
		})
		notes = append(notes, n)
	}
	seen := map[string]bool{}
	plans.WalkSteps(p, func(s *plans.Step) {
		name := s.ToolName.Value
		if seen[name] {
			return
		}
		seen[name] = true
		for _, n := range proj.catalog.ToolNotes(name) {
			n.Pos.File = proj.displayPath(n.Pos.File)
			notes = append(notes, n)
		}
	})
	return notes
}

// sameFile reports whether two paths name the same file.
func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// printValidation writes the human report: one compiler-style line per
// problem and note, then the strict-output explanation when asked.
func printValidation(w io.Writer, v *validation, explain bool) {
	for _, p := range v.report.Problems {
		fmt.Fprintln(w, p.String())
	}
	for _, n := range v.report.Notes {
		fmt.Fprintln(w, n.NoteString())
	}
	if explain && v.plan != nil {
		printExplanation(w, v)
	}
}

func printExplanation(w io.Writer, v *validation) {
	ex := plans.ExplainStrict(v.plan)
	if len(ex) == 0 {
		fmt.Fprintf(w, "%s: no agent steps, so structured_output does not apply\n", v.file)
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

func writeValidation(w io.Writer, v *validation, explain bool) error {
	env := validationJSON{
		File:     v.file,
		OK:       v.report.OK(),
		Problems: toProblemsJSON(v.report.Problems),
		Notes:    toProblemsJSON(v.report.Notes),
	}
	if v.plan != nil {
		env.Plan = v.plan.Identifier.Value
		env.Steps = len(v.plan.Steps)
		if explain {
			env.Strict = []explanationJSON{}
			for _, e := range plans.ExplainStrict(v.plan) {
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
