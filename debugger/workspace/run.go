package workspace

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// RunOptions are what one run adds to the workspace's shared parts. Each
// run gets models of its own: a script provider's replies are used up as a
// run takes them.
type RunOptions struct {
	// Sinks receive the run's events, after the run store's recorder.
	Sinks []engine.Sink
	// Hook is consulted at every stop; a debug session's own comes first.
	Hook engine.Hook
	// Script answers every model call from this replies file instead of
	// the configured providers.
	Script string
	// OnFailover is told when a model call falls over to the next model.
	OnFailover func(from, to string, err error)
	// OnPrune is told what [storage] keep_days deleted when the run is
	// the first to open the run store (each command that records runs
	// prunes once), if it deleted anything or failed.
	OnPrune func(Pruned)
	// MaxCost stops the run before its next model call once its priced
	// calls cost this many USD, over [limits] cost_usd; 0 keeps that.
	MaxCost float64
	// Held makes a debug session stop at the run's first stop, whatever
	// its breakpoints.
	Held bool
	// StrictBaseURL states that the servers at every provider's base_url
	// enforce strict structured output, so strict mode is sent to them.
	StrictBaseURL bool
	// Made says how the run is made, for its record: a run that Debug
	// drives is made by the debugger unless this says otherwise (the
	// workbench's plain runs go through a session too).
	Made engine.Made
}

// Run runs plan with inputs to its end, recorded in the run store unless
// the configuration keeps runs in memory.
func (w *Workspace) Run(ctx context.Context, plan *plans.Plan, inputs map[string]any, o RunOptions) (*engine.Result, error) {
	opts, err := w.engineOptions(o, true, "")
	if err != nil {
		return nil, err
	}
	res, err := engine.New(opts).Run(ctx, plan, inputs)
	w.Flush()
	return res, err
}

// Debug returns a session that will run plan stopping where the
// breakpoints of table say (nil: none, and no break on error), and at its
// first stop when o.Held, recorded as Run records.
func (w *Workspace) Debug(plan *plans.Plan, table *debugger.Breakpoints, o RunOptions) (*debugger.Session, error) {
	opts, err := w.engineOptions(o, true, "")
	if err != nil {
		return nil, err
	}
	s := debugger.New(plan, opts, orQuiet(table))
	if o.Held {
		s.Hold()
	}
	return s, nil
}

// Replay runs a recorded run again from its record, no model or tool
// called, with plan as its file reads now.
func (w *Workspace) Replay(ctx context.Context, rec *debugger.Recording, plan *plans.Plan, o RunOptions) (*debugger.ReplayResult, error) {
	// A replay's models answer from the record: no replies file is read
	// and no provider built for it.
	opts, err := w.engineOptions(o, false, rec.Run.ID)
	if err != nil {
		return nil, err
	}
	res, err := debugger.Replay(ctx, rec, plan, opts)
	w.Flush()
	return res, err
}

// Fork runs plan again from a step of a recorded run: the steps before it
// keep their recorded results, the rest run for real.
func (w *Workspace) Fork(ctx context.Context, rec *debugger.Recording, plan *plans.Plan, spec debugger.ForkSpec, o RunOptions) (*debugger.ForkResult, error) {
	opts, err := w.engineOptions(o, true, rec.Run.ID)
	if err != nil {
		return nil, err
	}
	res, err := debugger.Fork(ctx, rec, plan, spec, opts)
	w.Flush()
	return res, err
}

// ExecBreakpoints carries out a breakpoint verb (break, clear, cond,
// enable, disable, breakpoints, errors) on the table of plan while no
// session runs it.
func (w *Workspace) ExecBreakpoints(plan *plans.Plan, table *debugger.Breakpoints, in debugger.Instruction) (debugger.Answer, error) {
	return table.Exec(in, debugger.PlanShapes(plan, w.cat()))
}

// Shapes are the paths plan's runs can stop at, the plans it calls in
// the catalog included, which say whether a breakpoint can match.
func (w *Workspace) Shapes(plan *plans.Plan) *debugger.Shapes {
	return debugger.PlanShapes(plan, w.cat())
}

// engineOptions assembles the engine's parts for one run, its models
// among them when withModels is set; parent is the run a replay or fork is
// of ("" for none), which [storage] keep_days does not prune under it.
func (w *Workspace) engineOptions(o RunOptions, withModels bool, parent string) (engine.Options, error) {
	cfg := w.runConfig(o)
	var models *model.Models
	if withModels {
		scripts, err := w.loadScripts(cfg, o.Script)
		if err != nil {
			return engine.Options{}, err
		}
		models = model.New(cfg, model.Options{ScriptFile: o.Script, Scripts: scripts, OnFailover: o.OnFailover})
	}
	rec, err := w.openRecorder(o.OnPrune, parent)
	if err != nil {
		return engine.Options{}, err
	}
	var sinks []engine.Sink
	if rec != nil {
		sinks = append(sinks, rec)
	}
	sinks = append(append(sinks, w.sinks...), o.Sinks...)
	return engine.Options{Config: cfg, Catalog: w.cat(), Tools: w.toolRuntime(), Models: models, Hook: o.Hook, Sinks: sinks, Made: o.Made}, nil
}

// runConfig is the configuration with what a run's options say over it.
func (w *Workspace) runConfig(o RunOptions) *config.Config {
	if o.MaxCost <= 0 && !o.StrictBaseURL {
		return w.cfg
	}
	cfg := *w.cfg
	if o.MaxCost > 0 {
		cfg.Limits.CostUSD = o.MaxCost
	}
	if o.StrictBaseURL {
		cfg.Providers = maps.Clone(cfg.Providers)
		for name, p := range cfg.Providers {
			p.StrictBaseURL = true
			cfg.Providers[name] = p
		}
	}
	return &cfg
}

// UnpricedModel is a model a run may call that [pricing] has no price
// for.
type UnpricedModel struct {
	// Model is the model id, as [pricing] is keyed.
	Model string
	// Entry is the configuration key that names it first: models.default,
	// models.named.nano, or the fallbacks of one of those.
	Entry string
}

// SpendCap is the cap on what a run with o may spend on priced model
// calls ([limits] cost_usd, or o.MaxCost over it; 0 for none) and the
// models the run may call that the cap cannot count, having no price: a
// run of those alone is never stopped by it. With no cap none are listed.
func (w *Workspace) SpendCap(o RunOptions) (usd float64, unpriced []UnpricedModel) {
	cfg := w.runConfig(o)
	if cfg.Limits.CostUSD <= 0 {
		return 0, nil
	}
	seen := map[string]bool{}
	add := func(model, entry string) {
		if _, priced := cfg.Price(model); !priced && !seen[model] {
			seen[model] = true
			unpriced = append(unpriced, UnpricedModel{Model: model, Entry: entry})
		}
	}
	for _, name := range cfg.ModelNames() {
		ref, err := cfg.ResolveModel(name)
		if err != nil {
			continue
		}
		add(ref.Model, ref.Entry)
		if o.Script != "" {
			// A replies file answers every call under the entry's own
			// model; the fallbacks are never tried.
			continue
		}
		for _, f := range ref.Fallbacks {
			add(f.Model, ref.Entry+" fallbacks")
		}
	}
	return cfg.Limits.CostUSD, unpriced
}

// toolRuntime is the tool runtime every run shares, started on first use.
func (w *Workspace) toolRuntime() *tools.Runtime {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runtime == nil {
		w.runtime = tools.NewRuntime(w.cfg, w.cat())
	}
	return w.runtime
}

// loadScripts loads the replies files a run may read, by file name: the
// script file alone when there is one, else those of the configured
// script providers. They are read before the run, because a broken one
// found at the first model call would fail the run after earlier steps
// had done their work, and each once.
func (w *Workspace) loadScripts(cfg *config.Config, script string) (map[string]*model.Script, error) {
	files := []string{script}
	if script == "" {
		files = nil
		for _, name := range cfg.ProviderNames() {
			if p := cfg.Providers[name]; p.Type == config.ProviderScript && p.File != "" {
				files = append(files, p.File)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, file := range files {
		if _, ok := w.scripts[file]; ok {
			continue
		}
		s, err := model.LoadScript(file)
		if err != nil {
			return nil, errors.New(w.DisplayText(err.Error()))
		}
		w.scripts[file] = s
	}
	scripts := make(map[string]*model.Script, len(files))
	for _, file := range slices.Compact(slices.Sorted(slices.Values(files))) {
		scripts[file] = w.scripts[file]
	}
	return scripts, nil
}

// OpenStore opens the run store runs are recorded in, creating it in a
// fresh data directory, and deletes the runs older than [storage]
// keep_days, telling onPrune (when not nil) what that deleted or why it
// failed. It is tried once: its error is returned by this call or the first
// run, and later runs go unrecorded. With the memory backend it does
// nothing.
func (w *Workspace) OpenStore(onPrune func(Pruned)) error {
	_, err := w.openRecorder(onPrune, "")
	return err
}

// openRecorder is the recorder of the run store, opened on first use; nil
// when runs are not recorded. onPrune, when not nil, is told what the
// opening pruned, if anything; the run spare is not pruned.
func (w *Workspace) openRecorder(onPrune func(Pruned), spare string) (*store.Recorder, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recorder != nil || w.storeTried || w.cfg.Storage.Backend == config.BackendMemory {
		return w.recorder, nil
	}
	w.storeTried = true
	st := w.store
	if st == nil {
		var err error
		if st, err = store.Open(store.DefaultPath(w.cfg.Settings.DataDir)); err != nil {
			return nil, err
		}
	}
	// Pruning is housekeeping: the run is recorded whether or not it
	// worked, and onPrune hears why it did not.
	pruned, err := w.pruneOld(st, spare)
	if (len(pruned.Runs) > 0 || err != nil) && onPrune != nil {
		told := w.pruned(pruned)
		told.Err = err
		onPrune(told)
	}
	var secrets []store.Secret
	for value, ref := range w.cfg.Secrets() {
		secrets = append(secrets, store.Secret{Value: value, Ref: ref})
	}
	w.store, w.recorder = st, st.Recorder(secrets...)
	return w.recorder, nil
}

// Pruned is what [storage] keep_days deleted as a command opened the run
// store: the store is shared by every project, and so is the pruning,
// which a person should hear of rather than find their runs gone.
type Pruned struct {
	store.Removed
	// KeepDays is the setting that pruned.
	KeepDays int
	// OtherProjects counts the runs deleted that were not of this
	// workspace's project.
	OtherProjects int
	// Err is why the pruning failed: a *store.ReclaimError when the runs
	// were deleted but their space was not given back.
	Err error
}

// pruned describes what pruneOld removed.
func (w *Workspace) pruned(removed store.Removed) Pruned {
	return Pruned{Removed: removed, KeepDays: w.cfg.Storage.KeepDays, OtherProjects: w.OtherProjects(removed)}
}

// OtherProjects counts the runs removed that were not of this workspace's
// project.
func (w *Workspace) OtherProjects(removed store.Removed) int {
	root, n := w.Project().Root, 0
	for _, r := range removed.Runs {
		if r.Project != root {
			n++
		}
	}
	return n
}

// pruneOld deletes the runs older than [storage] keep_days, if it is set,
// before the workspace records another, but for the run spare (none when
// "").
func (w *Workspace) pruneOld(st *store.Store, spare string) (store.Removed, error) {
	days := w.cfg.Storage.KeepDays
	if days <= 0 {
		return store.Removed{}, nil
	}
	return st.Prune(context.Background(), time.Now().AddDate(0, 0, -days), 0, "", spare)
}

// Flush waits for the recorder to write what runs gave it, so that a
// reader of the store sees a run as soon as it has ended; Run, Replay and
// Fork flush before they return, a debug session's front end when the
// session ends.
func (w *Workspace) Flush() {
	w.mu.Lock()
	rec := w.recorder
	w.mu.Unlock()
	if rec != nil {
		rec.Flush()
	}
}

// Approvals is the approval policy that holds the tool calls patterns
// match, the project's read-only tools (its MCP servers' among them)
// excepted, for Session.Approve or as a run's hook.
func (w *Workspace) Approvals(patterns []string) (*debugger.Approvals, error) {
	return debugger.NewApprovals(patterns, w.cat(), w.toolRuntime())
}
