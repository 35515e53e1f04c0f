package main

import (
	"fmt"
	"io"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/config"
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
	// bare leaves "kind" out of jsonl's lines: debug --json's stdout,
	// whose lines are told apart by their fields ({"approve": ...,
	// "warning": ...}), as its other warnings are.
	bare bool
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
	// File, Line and Col place a configuration's warning, which a person
	// reads placed compiler style instead.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
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
	Kind string `json:"kind,omitempty"`
	warningAbout
	Warning string `json:"warning"`
}

// warn tells one warning, text, about what about names.
func (n notices) warn(about warningAbout, text string) {
	if n.jsonl {
		writeJSONLine(n.w, warningJSON{Kind: n.kind("warning"), warningAbout: about, Warning: text})
		return
	}
	fmt.Fprintln(n.w, "warning: "+about.said()+text)
}

// configWarning tells one of the configuration's warnings: to a person
// as compiler style (".stepwise/config.toml:9:1: warning:
// settings.nonsense: unknown key"), or as a JSON line placed by its fields,
// its text the key and the message ("settings.nonsense: unknown key"), as
// validate --json places a config_warning note.
func (n notices) configWarning(d config.Diagnostic) {
	if !n.jsonl {
		workspace.PrintWarnings(n.w)(d)
		return
	}
	n.warn(warningAbout{File: d.File, Line: d.Line, Col: d.Col}, config.Diagnostic{Key: d.Key, Message: d.Message}.String())
}

// prunedJSON is what [storage] keep_days deleted, as a JSON line:
// the runs, how many of them of other projects, and the line a person
// reads.
type prunedJSON struct {
	Kind          string   `json:"kind,omitempty"`
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
		writeJSONLine(n.w, prunedJSON{Kind: n.kind("pruned"), KeepDays: p.KeepDays, Runs: p.IDs(), OtherProjects: p.OtherProjects, Message: message})
		return
	}
	fmt.Fprintln(n.w, message)
}

// kind is a JSON line's kind, none when bare.
func (n notices) kind(k string) string {
	if n.bare {
		return ""
	}
	return k
}

// debugNotices are the notices of a command under the debugger: text on
// stderr, or with --json JSON lines on stdout among the session's own.
func debugNotices(s *streams, asJSON bool) notices {
	if asJSON {
		return notices{w: s.out, jsonl: true, bare: true}
	}
	return notices{w: s.err}
}
