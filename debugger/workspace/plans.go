package workspace

import (
	"fmt"
	"os"
	"strings"

	"github.com/stepwise-dev/stepwise/plans"
)

// Document is one plan file as a front end shows it: loaded and checked
// against the project's catalog.
type Document struct {
	// File is the path as the user is shown it; Path is the file's own.
	File string
	Path string
	// Plan is nil when the file does not parse.
	Plan   *plans.Plan
	Report plans.Report
}

// Name is how a front end names the document: the plan's identifier, or
// its file as shown when it has none.
func (d Document) Name() string {
	if d.Plan != nil && d.Plan.Identifier.Value != "" {
		return d.Plan.Identifier.Value
	}
	return d.File
}

// Load reads a plan file and runs both layers of validation on it: the
// plan's own (structure, templates, references) and the catalog's (tools
// and plans it calls, and what the catalog knows about it). A file that
// cannot be read is the error.
func (w *Workspace) Load(file string) (Document, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return Document{}, err
	}
	d := Document{File: w.DisplayPath(file), Path: file}
	p, r := plans.Load(d.File, src, w.cat().Dialect)
	if p != nil {
		resolved := w.cat().Resolve(p)
		for i := range resolved.Problems {
			resolved.Problems[i].Message = w.DisplayText(resolved.Problems[i].Message)
		}
		r.Merge(resolved)
		r.Notes = append(r.Notes, w.catalogNotes(p, file)...)
		r.Sort()
	}
	d.Plan, d.Report = p, r
	return d, nil
}

// catalogNotes are what the catalog knows about a plan beyond its tools:
// that another file defines the same identifier first, that its plan__
// calls lead back to it, and the notes of the user tools' files it calls
// (placed in those files). file is the plan's path as the file system
// knows it, not as it is shown.
func (w *Workspace) catalogNotes(p *plans.Plan, file string) []plans.Problem {
	var notes []plans.Problem
	id := p.Identifier.Value
	if e, ok := w.cat().Plan(id); ok && !sameFile(e.File, file) {
		notes = append(notes, plans.Problem{Code: plans.CodeShadowedPlan, Pos: p.Identifier.Pos,
			Message: fmt.Sprintf("plan '%s' is also defined by %s, which comes first on the plan paths: plan__%s runs that one, not this file", id, w.DisplayPath(e.File), id)})
	}
	if chain := w.cat().CallCycle(p); chain != nil {
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
		for _, n := range w.cat().ToolNotes(name) {
			n.Pos.File = w.DisplayPath(n.Pos.File)
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
