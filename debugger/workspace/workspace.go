// Package workspace is the one door a front end opens onto a project: Open
// assembles its configuration, tool catalog, tool runtime, run store and
// recorder, models and breakpoint tables once, and offers what every front
// end needs of them: the project's plans, loading and validating one,
// running, debugging, replaying and forking a plan, and the recorded runs.
// The command line, the workbench and the DAP server are its clients, and
// nothing else assembles an engine (delve's service/debugger plays this
// part for its front ends).
package workspace

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
)

// Options are how a front end opens a workspace.
type Options struct {
	// Warnings receives each of the configuration's warnings, its file
	// shown relative to the working directory (PrintWarnings writes them
	// as lines); nil drops them.
	Warnings func(config.Diagnostic)
	// LookupEnv is how the configuration reads the environment (HOME, the
	// XDG directories, STEPWISE_*); os.LookupEnv when nil. Tests keep the
	// machine's own configuration out with it.
	LookupEnv func(key string) (string, bool)
	// Sinks receive the events of every run the workspace starts, after
	// the run store's recorder and before the run's own sinks.
	Sinks []engine.Sink
}

// Workspace is one project opened for a front end. Its parts are made
// once and shared by every run; the tool runtime starts on the first run
// and the run store opens on first use. It is safe for concurrent use.
type Workspace struct {
	cfg *config.Config
	// catalog is the tools and plans of the project as last read; Rescan
	// reads them again when their files change.
	catalog atomic.Pointer[tools.Catalog]
	// base is the directory paths are shown relative to: the working
	// directory, or the project's root for a workbench.
	base string

	mu sync.Mutex
	// files stamps the files the catalog was read from (filesStamp).
	files    string
	runtime  *tools.Runtime
	store    *store.Store
	recorder *store.Recorder
	// storeTried is set once opening the store to record in was tried.
	storeTried bool
	sinks      []engine.Sink
	// scripts are the replies files runs read, each read once, by file.
	scripts map[string]*model.Script
	tables  map[string]*debugger.Breakpoints
	closed  bool
}

// Open opens the project found from dir (the working directory when
// empty): its configuration and tool catalog. What fails the load is the
// error, with the secrets the configuration expanded hidden: a
// configuration that cannot be used is a *config.LoadError, each of its
// diagnostics placed (file, line, column) as Load placed it, paths shown
// relative to the working directory, so that a front end can point at
// where it is wrong.
func Open(dir string, opts Options) (*Workspace, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = wd
	}
	w := &Workspace{base: wd, sinks: opts.Sinks, scripts: map[string]*model.Script{}, tables: map[string]*debugger.Breakpoints{}}
	cfg, diags, err := config.Load(config.Options{Dir: dir, LookupEnv: opts.LookupEnv})
	// Load's diagnostics are warnings: what fails the load comes back as
	// the error.
	if opts.Warnings != nil {
		for _, d := range diags {
			d.File = w.DisplayPath(d.File)
			opts.Warnings(d)
		}
	}
	if err != nil {
		return nil, shortenPaths(err, wd)
	}
	w.cfg = cfg
	w.catalog.Store(tools.Load(cfg))
	w.files = filesStamp(cfg)
	return w, nil
}

// PrintWarnings is a Warnings that writes each warning to out as a line,
// compiler style: .stepwise/config.toml:15:1: warning: settings.nonsense:
// unknown key.
func PrintWarnings(out io.Writer) func(config.Diagnostic) {
	return func(d config.Diagnostic) {
		if d.Key != "" {
			d.Key = "warning: " + d.Key
		} else {
			d.Message = "warning: " + d.Message
		}
		fmt.Fprintln(out, d.String())
	}
}

// shortenPaths is err, the error of a configuration's load, with the
// paths under dir in it shown relative to dir. A *config.LoadError stays
// one, with each diagnostic's file and message so shortened.
func shortenPaths(err error, dir string) error {
	short := func(s string) string { return strings.ReplaceAll(s, dir+string(filepath.Separator), "") }
	var loadErr *config.LoadError
	if !errors.As(err, &loadErr) {
		return errors.New(short(err.Error()))
	}
	shortened := &config.LoadError{Diagnostics: make([]config.Diagnostic, len(loadErr.Diagnostics))}
	for i, d := range loadErr.Diagnostics {
		d.File, d.Message = short(d.File), short(d.Message)
		shortened.Diagnostics[i] = d
	}
	return shortened
}

// cat is the catalog as last read.
func (w *Workspace) cat() *tools.Catalog { return w.catalog.Load() }

// Rescan reads the project's tool and plan files again when one has come,
// gone or changed since they were last read, and reports whether it did:
// from then on runs, validation and listings see the new catalog. A run
// going on keeps the catalog it started with. A workbench calls it as it
// watches its files.
func (w *Workspace) Rescan() bool {
	stamp := filesStamp(w.cfg)
	w.mu.Lock()
	defer w.mu.Unlock()
	if stamp == w.files {
		return false
	}
	cat := tools.Load(w.cfg)
	w.catalog.Store(cat)
	w.files = stamp
	if w.runtime != nil {
		w.runtime.SetCatalog(cat)
	}
	return true
}

// filesStamp is every file the catalog reads, each with its size and
// modification time: it changes when a file is added, removed, renamed
// or written.
func filesStamp(cfg *config.Config) string {
	var b strings.Builder
	for _, f := range tools.Files(cfg) {
		info, err := os.Stat(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s\x00%d\x00%d\n", f, info.Size(), info.ModTime().UnixNano())
	}
	return b.String()
}

// ProjectDirOf is the directory to open the workspace of a plan file
// from: the file's own, when it sits in a project, else "" (the working
// directory's).
func ProjectDirOf(file string) string {
	if _, inProject := config.FindProject(filepath.Dir(file)); inProject {
		return filepath.Dir(file)
	}
	return ""
}

// ProjectRoot is the root of the project that dir ("" for the working
// directory) lies in, "" when it lies in none: the directories of one
// project open one workspace.
func ProjectRoot(dir string) string {
	if dir == "" {
		dir = "."
	}
	if p, inProject := config.FindProject(dir); inProject {
		return p.Root
	}
	return ""
}

// Locate finds the file of a plan named by identifier on the plan paths,
// the plans the catalog skipped or hid included.
func (w *Workspace) Locate(identifier string) (string, error) {
	if e, ok := w.cat().Plan(identifier); ok {
		return e.File, nil
	}
	if file, ok := w.cat().SkippedPlan(identifier); ok {
		return file, nil
	}
	return "", fmt.Errorf("%s: no such file, and no plan with that identifier on the plan paths", identifier)
}

// ShowPathsFrom makes paths show relative to dir (a workbench shows them
// relative to the project's root) instead of the working directory.
func (w *Workspace) ShowPathsFrom(dir string) {
	w.base = dir
}

// Close stops the tool runtime, writes what the recorder still holds and
// closes the run store. Its error is the first a part met: a recorder's
// says the store did not record everything.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	if w.runtime != nil {
		w.runtime.Close()
	}
	if w.recorder != nil {
		errs = append(errs, w.recorder.Close())
	}
	if w.store != nil {
		errs = append(errs, w.store.Close())
	}
	return errors.Join(errs...)
}

// Project is what a front end shows of the project.
type Project struct {
	// Root is the project's root directory, "" outside a project.
	Root string
	// Dir is its .stepwise directory, "" outside a project.
	Dir string
	// PlanPaths are the directories plans are found in, first first.
	PlanPaths []string
	// LogPath is the workbench's log file.
	LogPath string
	// Recorded says whether runs are recorded in a run store.
	Recorded bool
}

// Project describes the project.
func (w *Workspace) Project() Project {
	p := Project{PlanPaths: w.cfg.Plans.Paths, LogPath: w.cfg.Workbench.LogPath, Recorded: w.cfg.Storage.Backend != config.BackendMemory}
	if w.cfg.Project != nil {
		p.Root, p.Dir = w.cfg.Project.Root, w.cfg.Project.Dir
	}
	return p
}

// LogLevel is the level the configuration logs at (STEPWISE_LOG).
func (w *Workspace) LogLevel() slog.Level {
	return w.cfg.LogLevel
}

// PlanFiles lists the plan files on the plan paths.
func (w *Workspace) PlanFiles() []string {
	return w.cat().PlanFiles()
}

// DisplayPath shortens an absolute path near the base directory to a
// relative one, the way a user would have typed it; a path far from it
// (more than two levels up) stays absolute, which is then the clearer.
func (w *Workspace) DisplayPath(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(w.base, path)
	if err != nil || strings.HasPrefix(rel, strings.Repeat(".."+string(filepath.Separator), 3)) {
		return path
	}
	return rel
}

// DisplayText shortens every absolute path under the base directory in a
// message (the catalog's reasons carry the files they are about), and
// hides the secrets the configuration expanded.
func (w *Workspace) DisplayText(s string) string {
	return w.cfg.Redact(strings.ReplaceAll(s, w.base+string(filepath.Separator), ""))
}

// Redact hides in s the secrets the configuration expanded (config.Redact),
// and nothing else: a front end that shows a run's values whole, such as a
// report written to be shared, keeps them as recorded but for those.
func (w *Workspace) Redact(s string) string { return w.cfg.Redact(s) }

// HasSecrets reports whether Redact has anything to hide, so that a front
// end can leave text it would give it as it is.
func (w *Workspace) HasSecrets() bool { return w.cfg.HasSecrets() }

// Breakpoints is the breakpoint table of a plan, kept in the project
// between sessions; outside a project it is kept nowhere. A table whose
// file cannot be read is returned empty with the error, and is then kept
// nowhere.
func (w *Workspace) Breakpoints(d Document) (*debugger.Breakpoints, error) {
	plan := strings.TrimSuffix(d.Name(), ".yaml")
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.tables[plan]; ok {
		return t, nil
	}
	t := debugger.NewBreakpoints()
	var err error
	if w.cfg.Project != nil {
		t, err = debugger.OpenBreakpoints(debugger.BreakpointFile(w.cfg.Project.Dir, plan))
	}
	w.tables[plan] = t
	return t, err
}

// ShownPlan is the name of the plan the workbench showed last in the
// project, kept between sessions so that it reopens on it; empty outside
// a project or when none was kept.
func (w *Workspace) ShownPlan() string {
	if w.cfg.Project == nil {
		return ""
	}
	b, err := os.ReadFile(shownPlanFile(w.cfg.Project.Dir))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// KeepShownPlan keeps name as the plan the workbench shows, for the next
// session; outside a project it is kept nowhere.
func (w *Workspace) KeepShownPlan(name string) error {
	if w.cfg.Project == nil {
		return nil
	}
	file := shownPlanFile(w.cfg.Project.Dir)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("keep the plan shown: %w", err)
	}
	if err := os.WriteFile(file, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("keep the plan shown: %w", err)
	}
	return nil
}

// shownPlanFile is where the plan shown last is kept:
// .stepwise/workbench/shown in its project.
func shownPlanFile(projectDir string) string {
	return filepath.Join(projectDir, "workbench", "shown")
}
