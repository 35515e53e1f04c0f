package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/charmbracelet/x/term"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans/examples"
	"github.com/stepwise-dev/stepwise/tui"
)

// runWorkbench opens the TUI on a plan file, on the plans of a project
// directory, or (with no argument) on the embedded demo project, kept
// under the data directory.
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

// keptDemo writes the demo project where the workbench keeps it, the
// demo directory under the user's data directory, or points the one
// there at this executable: its runs then stay usable from one session
// to the next.
func keptDemo() (string, error) {
	cfg, _, err := config.Load(config.Options{UserOnly: true})
	if err != nil {
		return "", fmt.Errorf("the demo project has no place to be kept: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	demo := filepath.Join(cfg.Settings.DataDir, "demo")
	if err := examples.KeepProject(demo, exe); err != nil {
		return "", err
	}
	return demo, nil
}

// isTerminal reports whether a stream is a terminal; a stream that is not a
// file (a test's buffer) is not.
func isTerminal(stream any) bool {
	_, ok := terminalFile(stream)
	return ok
}

// terminalFile is the file of a stream that is a terminal, seen through
// the secretHider that may wrap it.
func terminalFile(stream any) (*os.File, bool) {
	if h, ok := stream.(secretHider); ok {
		stream = h.w
	}
	f, ok := stream.(*os.File)
	return f, ok && term.IsTerminal(f.Fd())
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
		demo, err := keptDemo()
		if err != nil {
			return w, err
		}
		dir = demo
		w.opts.Notice = "the demo project is kept in " + demo + ", its runs with it"
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
	ws, err := workspace.Open(dir, workspace.Options{Warnings: workspace.PrintWarnings(s.err)})
	if err != nil {
		return w, err
	}
	// The workspace closes (its recorder flushing into the store) before
	// the log it may write to.
	w.closers = append([]func() error{ws.Close}, w.closers...)
	proj := ws.Project()
	w.opts.Title = dir
	if len(args) == 0 {
		w.opts.Title = "demo project"
	}
	if proj.Root != "" {
		ws.ShowPathsFrom(proj.Root)
		if len(args) > 0 && file == "" {
			w.opts.Title = proj.Root
		}
	}
	files := ws.PlanFiles()
	w.opts.FollowPlanFiles = file == ""
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return w, err
		}
		files = []string{abs}
		w.opts.Title = file
	}
	for _, f := range files {
		w.opts.Documents = append(w.opts.Documents, tui.LoadDocument(ws, f))
	}
	if len(w.opts.Documents) == 0 {
		return w, fmt.Errorf("no plans found in %s (plan paths: %v); stepwise demo DIR writes a project to start from", dir, proj.PlanPaths)
	}

	logger, logPath, closeLog, err := openWorkbenchLog(proj.LogPath, ws.LogLevel())
	if err != nil {
		fmt.Fprintln(s.err, "warning: the workbench log cannot be written:", err)
	} else {
		w.closers = append(w.closers, closeLog)
		w.opts.Log, w.opts.LogPath = logger, logPath
	}
	// The workbench records its runs as stepwise run does, creating the
	// store on the first run of a fresh data directory.
	if err := ws.OpenStore(notices{w: s.err}.pruned); err != nil {
		fmt.Fprintln(s.err, "warning: the run store cannot be opened; runs will not be recorded:", err)
	}
	w.opts.Workspace = ws
	return w, nil
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
