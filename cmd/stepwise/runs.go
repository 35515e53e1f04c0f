package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/timeview"
)

func newRunsCommand(s *streams) *cobra.Command {
	var (
		plan   string
		limit  int
		all    bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the recorded runs of this project, newest first",
		Long: "List the runs of the project the working directory is in, newest first: id, plan,\n" +
			"status, start, duration, steps, tokens and cost. The run store is one per data directory,\n" +
			"shared by every project; --all (or running it outside a project) lists the runs of every\n" +
			"project, with the project each belongs to. A run whose process ended before it finished\n" +
			"is interrupted. stepwise inspect RUN shows one run whole, whatever its project.\n\n" +
			"STATUS is ok, exited (an exit gate fired), failed, aborted, running or interrupted; " + format.MarkDecided + " after\n" +
			"it says a person decided some of the run's results at its stops (an injected or replaced\n" +
			"value, an answer, an approval): stepwise inspect RUN marks the steps they decided. MADE says\n" +
			"how the run was made: run, debug, replay (answered from a recorded run) or fork (a recorded\n" +
			"run run again from one of its steps). DURATION is wall time; (2.1s held) says how much of it\n" +
			"the run waited at stops: for a person, a debugger, an approval.",
		Args: exactArgs(0, "no arguments (--plan ID keeps one plan's runs)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit takes 0 (every run) or more, not %d", limit)}
			}
			form := jsonFlag(asJSON, jsonObject)
			ws, err := openProject(s, form)
			if err != nil {
				return err
			}
			defer ws.Close()
			// Outside a project there is no project to keep to: every
			// project's runs are listed, as with --all.
			f := record.RunFilter{Plan: plan}
			if !all {
				f.Project = ws.Project().Root
			}
			everyProject := f.Project == ""
			// One more than shown says whether older runs were left out.
			if limit > 0 {
				f.Limit = limit + 1
			}
			list, err := ws.Runs(cmd.Context(), f)
			var none *workspace.NoStoreError
			note := ""
			switch {
			case errors.As(err, &none):
				list, note = []record.RunSummary{}, none.Reason
			case err != nil:
				return form.refuse(s, err)
			default:
				switch {
				case limit > 0 && len(list) > limit:
					list = list[:limit]
					note = fmt.Sprintf("the newest %d shown; --limit 0 lists every run", limit)
				case len(list) == 0 && plan != "" && everyProject:
					note = fmt.Sprintf("no runs of plan '%s' are recorded", plan)
				case len(list) == 0 && plan != "":
					note = fmt.Sprintf("no runs of plan '%s' are recorded in this project; --all lists those of every project", plan)
				case len(list) == 0 && everyProject:
					note = "no runs are recorded"
				case len(list) == 0:
					note = "no runs of this project are recorded; --all lists those of every project"
				}
			}
			if asJSON {
				env := runListJSON{Runs: []runJSON{}, Count: len(list), Note: note}
				for _, r := range list {
					env.Runs = append(env.Runs, toRunJSON(r, everyProject))
				}
				return writeJSON(s.out, env)
			}
			if note != "" {
				fmt.Fprintln(s.err, note)
			}
			printRuns(s.out, list, everyProject)
			return nil
		},
	}
	cmd.Flags().StringVar(&plan, "plan", "", "list the runs of this plan identifier only")
	cmd.Flags().IntVar(&limit, "limit", 20, "list at most this many runs; 0 lists every one")
	cmd.Flags().BoolVar(&all, "all", false, "list the runs of every project, each with its project")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the {runs, count, note} listing envelope")
	cmd.AddCommand(newRunsRmCommand(s), newRunsPruneCommand(s))
	return cmd
}

// newRunsRmCommand is stepwise runs rm: runs deleted from the store by id.
func newRunsRmCommand(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs from the run store, with everything recorded about them",
		Long: "Delete the runs named (full ids, or prefixes one run begins with) with their events, steps\n" +
			"and tool calls, and give the space back. Nothing is deleted when one of them is unknown,\n" +
			"ambiguous, or still being recorded by a running process.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s takes one or more RUN ids; stepwise runs lists them", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := openProject(s, noJSON)
			if err != nil {
				return err
			}
			defer ws.Close()
			removed, err := ws.RemoveRuns(cmd.Context(), args...)
			unreclaimed, deleted := reclaimFailed(err)
			if !deleted {
				return &exitCode{code: exitFailure, msg: "nothing was deleted: " + err.Error()}
			}
			fmt.Fprintf(s.err, "deleted %s: %s%s\n", countNoun(len(removed.Runs), "run", "runs"), strings.Join(removed.IDs(), ", "), givenBack(removed, unreclaimed))
			return nil
		},
	}
}

// newRunsPruneCommand is stepwise runs prune: the runs older than an age
// deleted, but for the newest few.
func newRunsPruneCommand(s *streams) *cobra.Command {
	var (
		olderThan time.Duration
		keep      int
		all       bool
	)
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION [--keep N] [--all]",
		Short: "Delete the runs older than an age, keeping the newest",
		Long: "Delete the runs of this project (every project's with --all, which it needs outside a\n" +
			"project) that started longer ago than --older-than (7d, 2w, 36h, 90m; Go's units with d and\n" +
			"w, combined as in 1w2d or 1d12h), except the --keep newest of each project and any run still\n" +
			"being recorded, and give the space back; it says how many it left and why. [storage]\n" +
			"keep_days does the same for every project each time a run is recorded.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case !cmd.Flags().Changed("older-than"):
				return usageError{fmt.Errorf("%s needs --older-than, a duration above 0 (7d, 2w, 36h, 90m)", cmd.CommandPath())}
			case olderThan <= 0:
				return usageError{fmt.Errorf("--older-than takes a duration above 0 (7d, 2w, 36h, 90m), not %s", durationValue{&olderThan})}
			}
			if keep < 0 {
				return usageError{fmt.Errorf("--keep takes 0 or more, not %d", keep)}
			}
			ws, err := openProject(s, noJSON)
			if err != nil {
				return err
			}
			defer ws.Close()
			// Unlike a listing, a deletion outside a project does not
			// widen to every project's runs unasked.
			root := ws.Project().Root
			if root == "" && !all {
				return usageError{errors.New("runs prune deletes this project's runs, and the working directory is in no project; --all prunes the runs of every project")}
			}
			removed, err := ws.PruneRuns(cmd.Context(), time.Now().Add(-olderThan), keep, all)
			unreclaimed, deleted := reclaimFailed(err)
			if !deleted {
				return &exitCode{code: exitFailure, msg: "nothing was deleted: " + err.Error()}
			}
			// As keep_days says it; outside a project there is no project
			// of its own to count the others against.
			whose := ""
			if all && root != "" && len(removed.Runs) > 0 {
				whose = ", " + ofProjects(ws.OtherProjects(removed))
			}
			fmt.Fprintf(s.err, "deleted %s older than %s%s%s%s\n", countNoun(len(removed.Runs), "run", "runs"), durationValue{&olderThan}, whose,
				givenBack(removed, unreclaimed), keptBack(removed, keep, all))
			return nil
		},
	}
	cmd.Flags().Var(durationValue{&olderThan}, "older-than", "delete the runs that started longer ago than this (7d, 2w, 36h, 1d12h)")
	cmd.Flags().IntVar(&keep, "keep", 0, "keep this many of the newest runs of each project, however old")
	cmd.Flags().BoolVar(&all, "all", false, "prune the runs of every project, not only this one's (needed outside a project)")
	return cmd
}

// ofProjects says whose the runs were that a pruning of every project's
// deleted: how many of them were of other projects than this one.
func ofProjects(otherProjects int) string {
	if otherProjects == 0 {
		return "all of this project"
	}
	return countNoun(otherProjects, "of them of another project", "of them of other projects")
}

// keptBack says, at the end of the line that tells a pruning, how many of
// the runs older than its age it left, and why: among the newest keep of
// their project (of each, with every project's runs), or still being
// recorded. A pruning that left none says nothing.
func keptBack(removed store.Removed, keep int, everyProject bool) string {
	project := "this project"
	if everyProject {
		project = "each project"
	}
	newest := fmt.Sprintf("among the newest %d of %s (--keep)", keep, project)
	const recording = "still being recorded"
	switch kept := removed.KeptNewest + removed.KeptRecording; {
	case kept == 0:
		return ""
	case removed.KeptRecording == 0:
		return fmt.Sprintf("; kept %d of them, %s", kept, newest)
	case removed.KeptNewest == 0:
		return fmt.Sprintf("; kept %d of them, %s", kept, recording)
	default:
		return fmt.Sprintf("; kept %d of them: %d %s, %d %s", kept, removed.KeptNewest, newest, removed.KeptRecording, recording)
	}
}

// reclaimFailed reads the error of a deletion: deleted is whether its runs
// were deleted, which they were when it has none or when only giving their
// space back failed (unreclaimed, which givenBack tells).
func reclaimFailed(err error) (unreclaimed *store.ReclaimError, deleted bool) {
	return unreclaimed, err == nil || errors.As(err, &unreclaimed)
}

// givenBack says, at the end of the line that tells a deletion, how much
// space it gave back to the file system, what keeps the rest and how that
// comes back: told nothing, a person cannot know whether any space will.
// A deletion of no run says nothing; one whose space could not be given
// back (unreclaimed) says why.
func givenBack(removed store.Removed, unreclaimed *store.ReclaimError) string {
	if len(removed.Runs) == 0 {
		return ""
	}
	if unreclaimed != nil {
		return " (no space given back: " + unreclaimed.Err.Error() + "; the next runs rm or runs prune tries again)"
	}
	var said []string
	if removed.Freed > 0 {
		said = append(said, format.Bytes(removed.Freed)+" given back")
	}
	if removed.Pending > 0 {
		more := ""
		if removed.Freed > 0 {
			more = " more"
		}
		said = append(said, "another process was reading the run store: "+format.Bytes(removed.Pending)+more+" comes back once no other process has it open")
	}
	if removed.Shared > 0 {
		said = append(said, format.Bytes(removed.Shared)+" of inputs and results shared with other runs stays until they are deleted too")
	}
	switch {
	case len(said) == 0:
		// What the runs held was freed inside pages the store keeps
		// using for the runs left.
		runs := "the runs"
		if len(removed.Runs) == 1 {
			runs = "the run"
		}
		return " (no space given back: " + runs + " took up too little of the run store's file to shrink it; the runs recorded next use that room)"
	case removed.Freed == 0 && removed.Pending == 0:
		return " (no space given back: " + said[0] + ")"
	}
	return " (" + strings.Join(said, "; ") + ")"
}

type runListJSON struct {
	Runs  []runJSON `json:"runs"`
	Count int       `json:"count"`
	Note  string    `json:"note,omitempty"`
}

type runJSON struct {
	ID   string `json:"id"`
	Plan string `json:"plan"`
	// Project is the root directory of the run's project, present when
	// runs of every project are listed: "" for a run outside a project
	// (or recorded before the store kept projects).
	Project *string `json:"project,omitempty"`
	Status  string  `json:"status"`
	// StartedAt and EndedAt are RFC 3339; EndedAt is absent until the run
	// ends.
	StartedAt  *time.Time `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at,omitempty"`
	DurationMs int64      `json:"duration_ms"`
	Steps      int        `json:"steps"`
	Calls      int        `json:"calls"`
	Tokens     int        `json:"tokens"`
	CostUSD    *float64   `json:"cost_usd,omitempty"`
	Error      string     `json:"error,omitempty"`
	// HeldMs is how much of the duration some thread of the run was held
	// at a stop; Decided counts the decisions a person made at its stops.
	HeldMs  int64 `json:"held_ms,omitempty"`
	Decided int   `json:"decided,omitempty"`
	// Made says how the run was made (run, debug, replay, fork), Parent
	// the run a replay or fork is of; Inputs are what it ran with. Runs
	// recorded before the store kept them have none of the three.
	Made   engine.Made     `json:"made,omitempty"`
	Parent string          `json:"parent,omitempty"`
	Inputs json.RawMessage `json:"inputs,omitempty"`
}

// toRunJSON is a run as the listing envelope shows it, with its project
// when withProject is set.
func toRunJSON(r record.RunSummary, withProject bool) runJSON {
	j := runJSON{ID: r.ID, Plan: r.Plan, Status: runStatus(r), StartedAt: timeOrNil(r.StartedAt), EndedAt: timeOrNil(r.EndedAt),
		DurationMs: r.Duration.Milliseconds(), Steps: r.StepsExecuted, Calls: r.Usage.Calls, Tokens: r.Usage.Tokens,
		CostUSD: r.Usage.CostUSD, Error: r.Error, HeldMs: r.Held.Milliseconds(), Decided: r.Decided,
		Made: r.Made, Parent: r.Parent, Inputs: r.Inputs}
	if withProject {
		j.Project = &r.Project
	}
	return j
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// runStatus is the status a front end shows: the recorded one, except that
// a run nobody records any longer and that never ended is interrupted.
func runStatus(r record.RunSummary) string {
	if r.Interrupted {
		return "interrupted"
	}
	return r.Status.String()
}

// printRuns prints one line per run under a header, with a last PROJECT
// column when withProject is set ("-" for a run of no project).
func printRuns(w io.Writer, list []record.RunSummary, withProject bool) {
	if len(list) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "ID\tPLAN\tSTATUS\tMADE\tSTARTED\tDURATION\tSTEPS\tTOKENS\tCOST"
	if withProject {
		header += "\tPROJECT"
	}
	fmt.Fprintln(tw, header)
	for _, r := range list {
		status, took := runStatus(r), format.RunTime(r.Duration)
		if r.Decided > 0 {
			status += " " + format.MarkDecided
		}
		if r.Held >= time.Millisecond {
			took += " (" + format.Duration(r.Held) + " held)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s", format.ShortID(r.ID), r.Plan, status, madeWord(r), format.Timestamp(r.StartedAt),
			took, r.StepsExecuted, format.Tokens(r.Usage.Tokens), format.Spend(r.Usage.Calls, r.Usage.CostUSD))
		if withProject {
			project := "-"
			if r.Project != "" {
				project = homePath(r.Project)
			}
			fmt.Fprintf(tw, "\t%s", project)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// madeWord says how a run was made, "-" for a run recorded before the
// store kept it.
func madeWord(r record.RunSummary) string {
	if r.Made == "" {
		return "-"
	}
	return string(r.Made)
}

// homePath shortens a path under the home directory to ~/..., the way a
// person reads it.
func homePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(home) {
		return p
	}
	home = filepath.Clean(home)
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return p
}

// planFile is the run's plan file as a path that says where it is: a
// relative one resolved against the root of the run's project, which is
// where a run is normally started from.
func planFile(d *record.RunDetail) string {
	if d.File == "" || d.Project == "" || filepath.IsAbs(d.File) {
		return d.File
	}
	return filepath.Join(d.Project, d.File)
}

func newInspectCommand(s *streams) *cobra.Command {
	var asJSON, asTimeline bool
	var stepPattern string
	var width, rows int
	cmd := &cobra.Command{
		Use:   "inspect RUN [--step PATTERN] [--timeline [--width N] [--rows N]]",
		Short: "Show everything recorded about one run",
		Long: "Show the run RUN names (its id, or a prefix of it that no other run shares, whatever\n" +
			"project it belongs to): its project and plan file, how it ended and why, its inputs, each\n" +
			"step with its input and result, the tool calls, the errors and the usage. The text cuts\n" +
			"long values short; --json gives them whole. --timeline draws the run as a waterfall\n" +
			"instead: a bar a step, item, round and tool call on one time axis, model time solid,\n" +
			"tool time shaded, held time hatched, failures marked; at most --rows bars (a map's failed\n" +
			"and slowest items first when cut), of the units --step matches and those under them.",
		Args: exactArgs(1, "one RUN id (or a prefix of it; stepwise runs lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, flag := range []string{"width", "rows"} {
				if cmd.Flags().Changed(flag) && !asTimeline {
					return usageError{fmt.Errorf("--%s sets the %s of --timeline's waterfall: add --timeline", flag, flag)}
				}
			}
			if asTimeline && asJSON {
				return usageError{errors.New("--timeline draws the run as text: leave out --json")}
			}
			if rows < 0 {
				return usageError{fmt.Errorf("--rows %d: give the most bars to draw, or 0 for all of them", rows)}
			}
			if width != 0 && width < minTimelineWidth {
				return usageError{fmt.Errorf("--width %d is too narrow for a waterfall: give %d columns or more", width, minTimelineWidth)}
			}
			form := jsonFlag(asJSON, jsonObject)
			ws, err := openProject(s, form)
			if err != nil {
				return err
			}
			defer ws.Close()
			if asTimeline {
				_, events, err := ws.RunEvents(cmd.Context(), args[0])
				if err != nil {
					return &exitCode{code: exitFailure, msg: err.Error()}
				}
				if width == 0 {
					width = terminalWidth(s.out)
				}
				opts := timeview.TextOptions{Width: width, Rows: rows, Step: stepPattern}
				out := s.out
				if f, ok := s.out.(*os.File); ok && isTerminal(f) && common.ColorEnabled(os.Getenv) && os.Getenv("TERM") != "dumb" {
					// On a terminal, the workbench's colours, brought
					// down to what the terminal shows.
					opts.Theme = common.NewTheme(true, true)
					out = colorprofile.NewWriter(f, os.Environ())
				}
				text, err := timeview.Text(timeline.FromEvents(events), opts)
				if err != nil {
					return usageError{err}
				}
				_, err = io.WriteString(out, text)
				return err
			}
			d, err := ws.OpenRun(cmd.Context(), args[0])
			if err != nil {
				return form.refuse(s, err)
			}
			debugger.InPlanOrder(d)
			debugger.MarkSteps(d)
			if stepPattern != "" {
				if err := onlyPaths(d, stepPattern); err != nil {
					return usageError{err}
				}
			}
			if asJSON {
				return writeJSON(s.out, toInspectJSON(d))
			}
			printRun(s.out, d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as one JSON object, values whole")
	cmd.Flags().BoolVar(&asTimeline, "timeline", false, "draw the run as a waterfall on one time axis, as wide as the terminal")
	cmd.Flags().IntVar(&width, "width", 0, "the waterfall's width in columns; 0 (the default) takes the terminal's, or 100 when not on one")
	cmd.Flags().IntVar(&rows, "rows", defaultTimelineRows, "the most bars the waterfall draws, a map's failed and slowest items first when cut (0: every one)")
	cmd.Flags().StringVar(&stepPattern, "step", "", "show only the steps, tool calls and errors whose path matches this pattern (* within a segment, ** across); with --timeline, the units it matches and those under them")
	return cmd
}

// defaultTimelineRows is how many bars --timeline draws unless --rows
// says: a run of ten thousand items reads in a CI log as its outliers.
const defaultTimelineRows = 200

// minTimelineWidth is the narrowest waterfall --width takes: a label
// column and a bar of ten columns.
const minTimelineWidth = 24

// terminalWidth is the width of the terminal stream writes to, or 100
// columns when it is not one (a CI log, a file).
func terminalWidth(stream any) int {
	if isTerminal(stream) {
		if w, _, err := term.GetSize(stream.(*os.File).Fd()); err == nil && w >= minTimelineWidth {
			return w
		}
	}
	return 100
}

// onlyPaths keeps the steps, tool calls, errors and warnings of a run
// whose path matches pattern: a run of thousands of map items is read one
// item, or one kind of step, at a time.
func onlyPaths(d *record.RunDetail, pattern string) error {
	pat, err := path.Compile(pattern)
	if err != nil {
		return fmt.Errorf("--step: %w", err)
	}
	var top []string
	for _, s := range d.Steps {
		if !strings.Contains(s.Path, "/") {
			top = append(top, s.Path)
		}
	}
	d.Steps = slices.DeleteFunc(d.Steps, func(s record.StepRecord) bool { return !pat.Match(s.Path) })
	d.ToolCalls = slices.DeleteFunc(d.ToolCalls, func(c record.ToolCall) bool { return !pat.Match(c.Path) })
	d.Errors = slices.DeleteFunc(d.Errors, func(n record.Notice) bool { return !pat.Match(n.Path) })
	d.Warnings = slices.DeleteFunc(d.Warnings, func(n record.Notice) bool { return !pat.Match(n.Path) })
	d.ModelCalls = slices.DeleteFunc(d.ModelCalls, func(c record.ModelCall) bool { return !pat.Match(c.Path) })
	if len(d.Steps)+len(d.ToolCalls)+len(d.Errors)+len(d.Warnings)+len(d.ModelCalls) == 0 {
		return fmt.Errorf("--step %s matches nothing recorded in run %s; its steps: %s (* matches within a segment, ** across)", pattern, d.ID, strings.Join(top, ", "))
	}
	return nil
}

// phase says how a run ended, and cause why: the error, or the exit's
// message.
func phase(d *record.RunDetail) (phase, cause string) {
	switch d.Status {
	case engine.StatusOK:
		return "finished ok", ""
	case engine.StatusExited:
		if d.Exit == nil {
			return "exited", ""
		}
		return "exited by gate " + d.Exit.Step, exitMessage(d.Exit)
	case engine.StatusFailed:
		switch {
		case d.Exit != nil:
			return fmt.Sprintf("failed: gate %s exited with status %s", d.Exit.Step, d.Exit.Status), exitMessage(d.Exit)
		case len(d.Errors) > 0:
			return "failed at step " + d.Errors[0].Path, d.Error
		}
		return "failed", d.Error
	case engine.StatusAborted:
		return "aborted", d.Error
	case engine.StatusRunning:
		last := d.LastEvent
		where := ""
		if last.Seq > 0 {
			where = fmt.Sprintf("its events stopped at %s, after %s", format.Timestamp(last.Time), last.Kind)
			if last.Path != "" {
				where += " of " + last.Path
			}
		}
		if d.Interrupted {
			return "interrupted: the process ended before the run finished", where
		}
		return "running: " + d.Recorder + " is recording it", where
	}
	return d.Status.String(), d.Error
}

func exitMessage(e *engine.Exit) string {
	if e.Reason != "" {
		return e.Message + " (" + e.Reason + ")"
	}
	return e.Message
}

// cut is a value shortened to about width characters for a line of text.
// retriedText says why a model call's attempts failed before one
// answered: "after 1 failed attempt: model a/b: the server sent nothing
// for 3s (llm_idle_timeout_seconds)".
func retriedText(retries []string) string {
	return "after " + countNoun(len(retries), "failed attempt", "failed attempts") + ": " + strings.Join(retries, "; ")
}

func cut(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// valueWidth is how much of an input or a result a line of text shows.
const valueWidth = 120

func printRun(w io.Writer, d *record.RunDetail) {
	ph, cause := phase(d)
	fmt.Fprintf(w, "run      %s\n", d.ID)
	if d.Project != "" {
		fmt.Fprintf(w, "project  %s\n", homePath(d.Project))
	}
	plan := d.Plan
	if file := planFile(d); file != "" {
		plan += " (" + homePath(file) + ")"
	}
	fmt.Fprintf(w, "plan     %s\n", plan)
	switch {
	case d.ParentDeleted:
		fmt.Fprintf(w, "parent   %s (deleted since)\n", d.Parent)
	case d.Parent != "":
		fmt.Fprintf(w, "parent   %s\n", d.Parent)
	}
	took := "took"
	if d.EndedAt.IsZero() {
		took = "events for"
	}
	fmt.Fprintf(w, "started  %s, %s %s\n", format.Timestamp(d.StartedAt), took, format.HeldTime(d.Duration, d.Held))
	fmt.Fprintf(w, "phase    %s\n", ph)
	if cause != "" {
		fmt.Fprintf(w, "cause    %s\n", cause)
	}
	if len(d.Inputs) > 0 {
		fmt.Fprintf(w, "inputs   %s\n", cut(string(d.Inputs), valueWidth))
	}
	if len(d.Output) > 0 {
		fmt.Fprintf(w, "output   %s\n", cut(string(d.Output), valueWidth))
	}
	if d.Answer != "" {
		fmt.Fprintf(w, "answer   %s\n", cut(d.Answer, valueWidth))
	}

	fmt.Fprintf(w, "\nsteps (%d)\n", len(d.Steps))
	width := 0
	for _, st := range d.Steps {
		width = max(width, len(st.Path))
	}
	for _, st := range d.Steps {
		took := format.Millis(st.Ms)
		if st.Status == engine.StepRunning {
			took = "-"
		}
		fmt.Fprintf(w, "  %-*s  %-7s  %6s  %s%s\n", width, st.Path, st.Status, took, st.Tool, unitNotes(st.HeldMs, st.Decided, st.Reused))
		detail(w, "in", st.Input)
		detail(w, "out", st.Result)
		if st.Error != "" {
			fmt.Fprintf(w, "      error  %s\n", cut(st.Error, valueWidth))
		}
	}

	if len(d.ToolCalls) > 0 {
		fmt.Fprintf(w, "\ntool calls (%d)\n", len(d.ToolCalls))
		// Columns, as the steps have: each call's details are under it,
		// so a tabwriter, which aligns runs of rows, would not align them.
		type callRow struct{ status, took string }
		rows := make([]callRow, len(d.ToolCalls))
		pathWidth, toolWidth, statusWidth, tookWidth := 0, 0, 0, 0
		for i, c := range d.ToolCalls {
			rows[i] = callRow{"ok", format.Millis(c.Ms)}
			switch {
			case !c.Ended:
				rows[i] = callRow{"no end", "-"}
			case c.IsError:
				rows[i].status = "error"
			}
			pathWidth, toolWidth = max(pathWidth, utf8.RuneCountInString(c.Path)), max(toolWidth, utf8.RuneCountInString(c.Tool))
			statusWidth, tookWidth = max(statusWidth, len(rows[i].status)), max(tookWidth, len(rows[i].took))
		}
		for i, c := range d.ToolCalls {
			fmt.Fprintf(w, "  %-*s  %-*s  %-*s  %*s%s\n", pathWidth, c.Path, toolWidth, c.Tool, statusWidth, rows[i].status, tookWidth, rows[i].took, unitNotes(c.HeldMs, c.Decided, c.Reused))
			detail(w, "args", c.Args)
			detail(w, "out", c.Result)
			if c.Error != "" {
				fmt.Fprintf(w, "      error  %s\n", cut(c.Error, valueWidth))
			}
		}
	}
	// A person's decisions and those a replay made again are listed
	// apart, each with its unit's mark: nobody decided the second kind in
	// this run.
	var byHand, again []record.Decision
	for _, dec := range d.Decisions {
		if dec.Origin == "" {
			byHand = append(byHand, dec)
		} else {
			again = append(again, dec)
		}
	}
	for _, list := range []struct {
		title, mark string
		decs        []record.Decision
	}{{"decided by hand", format.MarkDecided, byHand}, {"made again by the replay", format.MarkReplayed, again}} {
		if len(list.decs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", list.title, len(list.decs))
		for _, dec := range list.decs {
			fmt.Fprintf(w, "  %s %s  %s\n", list.mark, dec.Path, format.DecisionText(dec.Action, dec.Stop))
		}
	}
	for _, list := range []struct {
		name    string
		notices []record.Notice
	}{{"errors", d.Errors}, {"warnings", d.Warnings}} {
		if len(list.notices) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", list.name, len(list.notices))
		for _, n := range list.notices {
			fmt.Fprintf(w, "  %s: %s\n", n.Path, n.Message)
		}
	}
	if len(d.ModelCalls) > 0 {
		// A call that failed, or that the run's abort cut short, has no
		// usage: the usage's count of calls leaves it out, and the
		// heading says why the two differ.
		failed, aborted := 0, 0
		for _, c := range d.ModelCalls {
			switch {
			case c.Aborted:
				aborted++
			case c.Error != "":
				failed++
			}
		}
		var unpaid []string
		if failed > 0 {
			unpaid = append(unpaid, fmt.Sprintf("%d failed", failed))
		}
		if aborted > 0 {
			unpaid = append(unpaid, fmt.Sprintf("%d cut short by the abort", aborted))
		}
		if len(unpaid) > 0 {
			fmt.Fprintf(w, "\nmodel calls (%d; %s, which the usage does not count)\n", len(d.ModelCalls), strings.Join(unpaid, ", "))
		} else {
			fmt.Fprintf(w, "\nmodel calls (%d)\n", len(d.ModelCalls))
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range d.ModelCalls {
			line := fmt.Sprintf("  %s\t%s\t%s/%s\t%s\t%s in, %s out", c.Path, c.Role, c.Provider, c.Model, format.Millis(c.Ms), format.Tokens(c.InputTokens), format.Tokens(c.OutputTokens))
			if c.CachedTokens > 0 {
				line += ", " + format.Tokens(c.CachedTokens) + " cached"
			}
			if c.Strict != "" {
				line += "\tstrict: " + c.Strict
			}
			switch {
			case c.Aborted:
				line += "\taborted: " + cut(c.Error, valueWidth)
			case c.Error != "":
				line += "\terror: " + cut(c.Error, valueWidth)
			}
			if len(c.Retries) > 0 {
				line += "\t" + cut(retriedText(c.Retries), valueWidth)
			}
			if m := format.MarkText(c.Decided, c.Reused); m != "" {
				line += "\t" + m
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	if fs := debugger.Findings(d); len(fs) > 0 {
		fmt.Fprintf(w, "\nfindings (%d)\n", len(fs))
		for _, f := range fs {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	printUsage(w, d.UsageReport, d.UsageFromCalls)
}

// unitNotes is what a step's or a tool call's line adds to its duration:
// how much of it was held at stops, and who gave its result when it did
// not run.
func unitNotes(heldMs float64, decided, reused string) string {
	var out string
	if heldMs >= 1 {
		out += "  (" + format.Millis(heldMs) + " of it held)"
	}
	if m := format.MarkText(decided, reused); m != "" {
		out += "  " + m
	}
	return out
}

func detail(w io.Writer, label string, v json.RawMessage) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(w, "      %-5s  %s\n", label, cut(string(v), valueWidth))
}

func printUsage(w io.Writer, u engine.UsageReport, fromCalls bool) {
	title := "usage"
	if fromCalls {
		title = "usage so far (the model calls recorded; the run has no end)"
	}
	if u.Calls == 0 {
		fmt.Fprintf(w, "\n%s: no model calls\n", title)
		return
	}
	fmt.Fprintf(w, "\n%s: %s\n", title, usageSummary(u.Calls, u.Total(), u.CostUSD))
	fmt.Fprintf(w, "  input %d, output %d, cache write %d, cache read %d\n",
		u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(u.ByStep) > 0 {
		// A map's items are one line, their body step's, with its
		// dearest items under it: not a line an item.
		fmt.Fprintln(tw, "  by step")
		for _, l := range timeline.SpendOf(u).ByStep {
			if !l.Group() {
				fmt.Fprintf(tw, "    %s\t%s\n", l.Label, usageSummary(l.Calls, l.Tokens, l.Cost))
				continue
			}
			fmt.Fprintf(tw, "    %s ×%d\t%s\n", l.Label, len(l.Items), usageSummary(l.Calls, l.Tokens, l.Cost))
			for _, it := range l.Items[:min(len(l.Items), topSpendItems)] {
				fmt.Fprintf(tw, "      %s\t%s\n", it.Label, usageSummary(it.Calls, it.Tokens, it.Cost))
			}
			if more := len(l.Items) - topSpendItems; more > 0 {
				fmt.Fprintf(tw, "      and %s\t\n", countNoun(more, "more item", "more items"))
			}
		}
	}
	if len(u.ByModel) > 0 {
		fmt.Fprintln(tw, "  by model")
		for _, l := range u.ByModel {
			fmt.Fprintf(tw, "    %s/%s\t%s\n", l.Provider, l.Model, usageSummary(l.Calls, l.Total(), l.CostUSD))
		}
	}
	tw.Flush()
}

// topSpendItems is how many of a map's items the usage lists under its
// body step's line, the dearest first.
const topSpendItems = 3

// usageSummary is a usage line's calls, tokens and cost, the cost only
// where every call was priced.
func usageSummary(calls, tokens int, cost *float64) string {
	s := countNoun(calls, "call", "calls") + ", " + format.Tokens(tokens) + " tokens"
	if cost != nil {
		s += ", " + format.Spend(calls, cost)
	}
	return s
}

type inspectJSON struct {
	ID   string `json:"id"`
	Plan string `json:"plan"`
	// Project is the root directory of the run's project, absent for a
	// run outside a project (or recorded before the store kept projects).
	Project string `json:"project,omitempty"`
	// File is the plan file, resolved against Project when relative.
	File   string `json:"file"`
	Hash   string `json:"hash"`
	Parent string `json:"parent,omitempty"`
	// ParentDeleted says the parent is no longer in the store.
	ParentDeleted bool            `json:"parent_deleted,omitempty"`
	Status        string          `json:"status"`
	Phase         string          `json:"phase"`
	Cause         string          `json:"cause,omitempty"`
	StartedAt     *time.Time      `json:"started_at"`
	EndedAt       *time.Time      `json:"ended_at,omitempty"`
	DurationMs    int64           `json:"duration_ms"`
	Steps         int             `json:"steps_executed"`
	Inputs        json.RawMessage `json:"inputs"`
	Output        json.RawMessage `json:"output,omitempty"`
	Answer        string          `json:"answer,omitempty"`
	Exit          *engine.Exit    `json:"exit,omitempty"`
	EmptyData     bool            `json:"empty_data,omitempty"`
	StepList      []stepJSON      `json:"steps"`
	ToolCalls     []toolCallJSON  `json:"tool_calls"`
	Errors        []noticeJSON    `json:"errors"`
	Warnings      []noticeJSON    `json:"warnings"`
	Findings      []string        `json:"findings"`
	// HeldMs is how much of the duration some thread of the run was held
	// at a stop; Decisions are the decisions a person made at its stops,
	// and those a replay made again (with their origin).
	HeldMs     int64              `json:"held_ms"`
	Decisions  []decisionJSON     `json:"decisions"`
	ModelCalls []record.ModelCall `json:"model_calls"`
	Usage      engine.UsageReport `json:"usage"`
	// UsageComplete is false for a run without an end, whose usage is
	// added up from the model calls recorded.
	UsageComplete bool          `json:"usage_complete"`
	LastEvent     lastEventJSON `json:"last_event"`
}

type stepJSON struct {
	Path      string            `json:"path"`
	Tool      string            `json:"tool"`
	Status    engine.StepStatus `json:"status"`
	StartedAt *time.Time        `json:"started_at"`
	Ms        float64           `json:"ms"`
	// HeldMs is how much of Ms the step's threads were held at stops.
	HeldMs float64         `json:"held_ms"`
	Input  json.RawMessage `json:"input,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Decided is the action by which a person gave the step its result;
	// Reused says a replay or a fork reused a recorded one instead.
	Decided string `json:"decided,omitempty"`
	Reused  string `json:"reused,omitempty"`
}

type toolCallJSON struct {
	Path      string          `json:"path"`
	Tool      string          `json:"tool"`
	Ended     bool            `json:"ended"`
	IsError   bool            `json:"is_error"`
	StartedAt *time.Time      `json:"started_at"`
	Ms        float64         `json:"ms"`
	HeldMs    float64         `json:"held_ms"`
	Args      json.RawMessage `json:"args,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	Decided   string          `json:"decided,omitempty"`
	Reused    string          `json:"reused,omitempty"`
}

type decisionJSON struct {
	Path   string          `json:"path"`
	Stop   engine.StopKind `json:"stop"`
	Action string          `json:"action"`
	// Value is the value decided, redacted as the store keeps it; absent
	// for a decision without one (decline, deny, approve).
	Value json.RawMessage `json:"value,omitempty"`
	// Origin is "replay" for a decision a replay made again; a person's
	// has none.
	Origin string `json:"origin,omitempty"`
}

type noticeJSON struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

type lastEventJSON struct {
	Seq  uint64           `json:"seq"`
	Kind engine.EventKind `json:"kind"`
	Path string           `json:"path"`
	Time *time.Time       `json:"time"`
}

func toInspectJSON(d *record.RunDetail) inspectJSON {
	ph, cause := phase(d)
	inputs := d.Inputs
	if inputs == nil {
		inputs = json.RawMessage("null")
	}
	env := inspectJSON{ID: d.ID, Plan: d.Plan, Project: d.Project, File: planFile(d), Hash: d.Hash, Parent: d.Parent, ParentDeleted: d.ParentDeleted, Status: runStatus(d.RunSummary),
		Phase: ph, Cause: cause, StartedAt: timeOrNil(d.StartedAt), EndedAt: timeOrNil(d.EndedAt),
		DurationMs: d.Duration.Milliseconds(), Steps: d.StepsExecuted, Inputs: inputs, Output: d.Output, Answer: d.Answer,
		Exit: d.Exit, EmptyData: d.EmptyData, StepList: []stepJSON{}, ToolCalls: []toolCallJSON{}, Errors: []noticeJSON{},
		Warnings: []noticeJSON{}, Findings: []string{}, HeldMs: d.Held.Milliseconds(), Decisions: []decisionJSON{}, ModelCalls: d.ModelCalls, Usage: d.UsageReport, UsageComplete: !d.UsageFromCalls,
		LastEvent: lastEventJSON{Seq: d.LastEvent.Seq, Kind: d.LastEvent.Kind, Path: d.LastEvent.Path, Time: timeOrNil(d.LastEvent.Time)}}
	for _, st := range d.Steps {
		env.StepList = append(env.StepList, stepJSON{Path: st.Path, Tool: st.Tool, Status: st.Status, StartedAt: timeOrNil(st.StartedAt),
			Ms: st.Ms, HeldMs: st.HeldMs, Input: st.Input, Result: st.Result, Error: st.Error, Decided: st.Decided, Reused: st.Reused})
	}
	for _, c := range d.ToolCalls {
		env.ToolCalls = append(env.ToolCalls, toolCallJSON{Path: c.Path, Tool: c.Tool, Ended: c.Ended, IsError: c.IsError,
			StartedAt: timeOrNil(c.StartedAt), Ms: c.Ms, HeldMs: c.HeldMs, Args: c.Args, Result: c.Result, Error: c.Error, Decided: c.Decided, Reused: c.Reused})
	}
	for _, dec := range d.Decisions {
		env.Decisions = append(env.Decisions, decisionJSON(dec))
	}
	for _, n := range d.Errors {
		env.Errors = append(env.Errors, noticeJSON(n))
	}
	env.Findings = append(env.Findings, debugger.Findings(d)...)
	for _, n := range d.Warnings {
		env.Warnings = append(env.Warnings, noticeJSON(n))
	}
	return env
}
