package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/charmbracelet/x/term"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
	"github.com/stepwise-dev/stepwise/tui"
)

// runWorkbench opens the TUI on a plan file, on the plans of a project
// directory, or (with no argument) on a scratch copy of the embedded demo
// project.
func runWorkbench(ctx context.Context, s *streams, args []string) error {
	if !isTerminal(os.Stdout) || !isTerminal(os.Stdin) {
		return &exitCode{code: exitUsage, msg: "the workbench needs an interactive terminal on stdin and stdout; for scripts use stepwise run, stepwise debug or stepwise validate"}
	}
	w, err := openWorkbench(args, s)
	if w != nil {
		defer w.close()
	}
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	return tui.Run(ctx, w.opts)
}

// isTerminal reports whether a stream is a terminal; a stream that is not a
// file (a test's buffer) is not.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// workbench is what the TUI opens, and what to release when it closes.
type workbench struct {
	opts    tui.Options
	closers []func() error
}

func (w *workbench) close() {
	for _, c := range w.closers {
		c()
	}
}

// openWorkbench loads what the workbench shows and runs: the plans, the
// project's engine parts, the run store and the log file.
func openWorkbench(args []string, s *streams) (*workbench, error) {
	w := &workbench{}
	dir, file := "", ""
	switch {
	case len(args) == 0:
		demo, err := os.MkdirTemp("", "stepwise-demo-")
		if err != nil {
			return w, err
		}
		w.closers = append(w.closers, func() error { return os.RemoveAll(demo) })
		exe, err := os.Executable()
		if err != nil {
			return w, err
		}
		if err := examples.WriteProject(demo, exe); err != nil {
			return w, err
		}
		dir = demo
	default:
		info, err := os.Stat(args[0])
		if err != nil {
			return w, err
		}
		if info.IsDir() {
			dir = args[0]
		} else {
			dir, file = filepath.Dir(args[0]), args[0]
		}
	}
	proj, err := openProject(dir, s.err)
	if err != nil {
		return w, err
	}
	w.opts.Title = dir
	if len(args) == 0 {
		w.opts.Title = "demo project"
	}
	if proj.cfg.Project != nil {
		proj.base = proj.cfg.Project.Root
		if len(args) > 0 && file == "" {
			w.opts.Title = proj.cfg.Project.Root
		}
	}
	load := func(path string) tui.Document {
		v, err := validatePlan(proj, path)
		if err != nil {
			// The file went away or cannot be read: say so as the
			// document's one problem, so the workbench keeps going.
			return documentError(path, err)
		}
		return tui.Document{File: v.file, Path: path, Plan: v.plan, Report: v.report}
	}
	files := proj.catalog.PlanFiles()
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return w, err
		}
		files = []string{abs}
		w.opts.Title = file
	}
	for _, f := range files {
		w.opts.Documents = append(w.opts.Documents, load(f))
	}
	if len(w.opts.Documents) == 0 {
		return w, fmt.Errorf("no plans found in %s (plan paths: %v); stepwise demo DIR writes a project to start from", dir, proj.cfg.Plans.Paths)
	}

	logger, logPath, closeLog, err := openWorkbenchLog(proj.cfg.Workbench.LogPath, proj.cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(s.err, "warning: the workbench log cannot be written:", err)
	} else {
		w.closers = append(w.closers, closeLog)
		w.opts.Log, w.opts.LogPath = logger, logPath
	}

	runtime := tools.NewRuntime(proj.cfg, proj.catalog)
	w.closers = append([]func() error{func() error { runtime.Close(); return nil }}, w.closers...)
	p := &tui.Project{
		Engine: engine.Options{Config: proj.cfg, Catalog: proj.catalog, Tools: runtime},
		// Each run gets models of its own, as each stepwise run does: a
		// script provider's replies are used up as a run takes them.
		NewModels: func() *model.Models { return model.New(proj.cfg, model.Options{}) },
		Load:      load,
	}
	if len(proj.cfg.Plans.Paths) > 0 {
		p.PlanDir = proj.cfg.Plans.Paths[0]
	}
	if proj.cfg.Project != nil {
		p.Root = proj.cfg.Project.Root
		p.BreakpointDir = proj.cfg.Project.Dir
	}
	if proj.cfg.Storage.Backend != config.BackendMemory {
		// The workbench records its runs as stepwise run does, creating
		// the store on the first run of a fresh data directory.
		st, err := store.Open(store.DefaultPath(proj.cfg.Settings.DataDir))
		if err == nil {
			if err = pruneOld(proj.cfg, st); err != nil {
				st.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(s.err, "warning: the run store cannot be opened; runs will not be recorded:", err)
		} else {
			rec := st.Recorder()
			p.Store = st
			p.Engine.Sinks = []engine.Sink{rec}
			// The recorder flushes before the store closes.
			w.closers = append([]func() error{rec.Close, st.Close}, w.closers...)
		}
	}
	w.opts.Project = p
	return w, nil
}

// documentError is a plan file that cannot be read, as a document whose
// one problem says why.
func documentError(path string, err error) tui.Document {
	return tui.Document{File: path, Path: path, Report: plans.Report{Problems: []plans.Problem{
		{Code: plans.CodeUnreadable, Message: err.Error() + "; the workbench reads it again when it changes", Pos: plans.Pos{File: path}},
	}}}
}

// openWorkbenchLog opens the workbench's log at path, the configuration's
// [workbench] log_path (which STEPWISE_WORKBENCH_LOG or GRAPH_WORKBENCH_LOG
// overrides, and which defaults to workbench.log beside the run store). The
// workbench owns the terminal, so its diagnostics go there, appended across
// sessions, at level (STEPWISE_LOG's).
func openWorkbenchLog(path string, level slog.Level) (*slog.Logger, string, func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, "", nil, err
	}
	logger := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}))
	logger.Info("workbench opened", "pid", os.Getpid())
	return logger, path, f.Close, nil
}
