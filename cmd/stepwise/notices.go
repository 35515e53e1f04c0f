package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

// notices tells on stderr, w, what a command that runs a plan has to say
// beside the run's own events: its warnings (the configuration's, the
// spend cap's, a failover's...) and what [storage] keep_days pruned. Each
// is one line: for a person, text; under --events jsonl (jsonl), where a
// script reads every line of stderr, one JSON object. Every such warning
// of run and fork is told by it, so that a script reads each the same way.
type notices struct {
	w     io.Writer
	jsonl bool
	// quiet (--quiet) leaves out what keep_days pruned, but for a
	// pruning that failed, and not under jsonl.
	quiet bool
}

// warningAbout is what a warning is about where a setting names it: a
// JSON line has it beside the text, and a person reads it before the text
// ("--set E2: the fork ran no step there"); a model, which the text names
// already, the JSON line alone adds.
type warningAbout struct {
	Approve  string `json:"approve,omitempty"`
	Set      string `json:"set,omitempty"`
	Model    string `json:"model,omitempty"`
	KeepDays int    `json:"keep_days,omitempty"`
}

// said is what a person reads of about before a warning's text.
func (a warningAbout) said() string {
	switch {
	case a.Approve != "":
		return "--approve " + a.Approve + ": "
	case a.Set != "":
		return "--set " + a.Set + ": "
	case a.KeepDays > 0:
		return fmt.Sprintf("[storage] keep_days = %d: ", a.KeepDays)
	}
	return ""
}

// warningJSON is a warning's JSON line: {"kind": "warning", ...,
// "warning": TEXT}.
type warningJSON struct {
	Kind string `json:"kind"`
	warningAbout
	Warning string `json:"warning"`
}

// warn tells one warning, text, about what about names.
func (n notices) warn(about warningAbout, text string) {
	if n.jsonl {
		writeJSONLine(n.w, warningJSON{Kind: "warning", warningAbout: about, Warning: text})
		return
	}
	fmt.Fprintln(n.w, "warning: "+about.said()+text)
}

// Write tells the configuration's warnings, which workspace.Open writes a
// line each, worded whole for a person (".stepwise/config.toml:9:1:
// warning: settings.nonsense: unknown key"): as they are, or under
// --events jsonl each a JSON warning line with the line as its text.
func (n notices) Write(p []byte) (int, error) {
	if !n.jsonl {
		return n.w.Write(p)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		n.warn(warningAbout{}, line)
	}
	return len(p), nil
}

// prunedJSON is what [storage] keep_days deleted, as a JSON line:
// the runs, how many of them of other projects, and the line a person
// reads.
type prunedJSON struct {
	Kind          string   `json:"kind"`
	KeepDays      int      `json:"keep_days"`
	Runs          []string `json:"runs"`
	OtherProjects int      `json:"other_projects"`
	Message       string   `json:"message"`
}

// pruned tells what [storage] keep_days deleted as a command opened the
// run store, which is shared by every project: a person should hear of it
// rather than find runs gone. A pruning that failed is a warning.
func (n notices) pruned(p workspace.Pruned) {
	if n.quiet && !n.jsonl && p.Err == nil {
		return
	}
	unreclaimed, deleted := reclaimFailed(p.Err)
	if !deleted {
		n.warn(warningAbout{KeepDays: p.KeepDays}, fmt.Sprintf("nothing was deleted: %s; the run is recorded all the same", p.Err))
		return
	}
	message := fmt.Sprintf("[storage] keep_days = %d: deleted %s older than %s, %s%s",
		p.KeepDays, countNoun(len(p.Runs), "run", "runs"), countNoun(p.KeepDays, "day", "days"), ofProjects(p.OtherProjects), givenBack(p.Removed, unreclaimed))
	if n.jsonl {
		writeJSONLine(n.w, prunedJSON{Kind: "pruned", KeepDays: p.KeepDays, Runs: p.IDs(), OtherProjects: p.OtherProjects, Message: message})
		return
	}
	fmt.Fprintln(n.w, message)
}
