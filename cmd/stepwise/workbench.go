package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/charmbracelet/x/term"

	"github.com/stepwise-dev/stepwise/plans/examples"
	"github.com/stepwise-dev/stepwise/tui"
)

// runWorkbench opens the TUI on a plan file, on the plans of a project
// directory, or (with no argument) on a scratch copy of the embedded demo
// project.
func runWorkbench(ctx context.Context, s *streams, args []string) error {
	if !isTerminal(os.Stdout) || !isTerminal(os.Stdin) {
		return &exitCode{code: exitUsage, msg: "the workbench needs an interactive terminal on stdin and stdout; for scripts use stepwise validate (and, soon, stepwise run)"}
	}
	opts, cleanup, err := workbenchDocuments(args, s)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	return tui.Run(ctx, opts)
}

// isTerminal reports whether a stream is a terminal; a stream that is not a
// file (a test's buffer) is not.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// workbenchDocuments loads what the workbench shows. The cleanup, when not
// nil, removes the demo's scratch directory.
func workbenchDocuments(args []string, s *streams) (tui.Options, func(), error) {
	if len(args) == 0 {
		dir, err := os.MkdirTemp("", "stepwise-demo-")
		if err != nil {
			return tui.Options{}, nil, err
		}
		cleanup := func() { os.RemoveAll(dir) }
		exe, err := os.Executable()
		if err != nil {
			return tui.Options{}, cleanup, err
		}
		if err := examples.WriteProject(dir, exe); err != nil {
			return tui.Options{}, cleanup, err
		}
		opts, err := projectDocuments(dir, s)
		opts.Title = "demo project"
		return opts, cleanup, err
	}
	target := args[0]
	info, err := os.Stat(target)
	if err != nil {
		return tui.Options{}, nil, err
	}
	if info.IsDir() {
		opts, err := projectDocuments(target, s)
		return opts, nil, err
	}
	proj, err := openProject(filepath.Dir(target), s.err)
	if err != nil {
		return tui.Options{}, nil, err
	}
	v, err := validatePlan(proj, target)
	if err != nil {
		return tui.Options{}, nil, err
	}
	return tui.Options{Title: target, Documents: []tui.Document{{File: v.file, Plan: v.plan, Report: v.report}}}, nil, nil
}

// projectDocuments validates every plan file on the plan paths of the
// project found from dir, the skipped ones included.
func projectDocuments(dir string, s *streams) (tui.Options, error) {
	proj, err := openProject(dir, s.err)
	if err != nil {
		return tui.Options{}, err
	}
	opts := tui.Options{Title: dir}
	if proj.cfg.Project != nil {
		opts.Title = proj.cfg.Project.Root
		proj.base = proj.cfg.Project.Root
	}
	for _, file := range proj.catalog.PlanFiles() {
		v, err := validatePlan(proj, file)
		if err != nil {
			return opts, err
		}
		opts.Documents = append(opts.Documents, tui.Document{File: v.file, Plan: v.plan, Report: v.report})
	}
	if len(opts.Documents) == 0 {
		return opts, fmt.Errorf("no plans found in %s (plan paths: %v)", dir, proj.cfg.Plans.Paths)
	}
	return opts, nil
}
