package main

import (
	"errors"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// jsonForm is how a command writes JSON on stdout: not at all (its answer
// is text for a person), as one object (--json), or as one object a line
// (the stream of debug --json).
type jsonForm int

const (
	noJSON jsonForm = iota
	jsonObject
	jsonStream
)

// jsonFlag is the form a --json flag asks for: form when it is set, noJSON
// when it is not.
func jsonFlag(set bool, form jsonForm) jsonForm {
	if set {
		return form
	}
	return noJSON
}

// openProject opens the working directory's project for a command that
// writes its answer in form; a project that cannot be opened (its
// configuration does not parse, cannot be read, holds a value of the
// wrong type) is refused in that form.
func openProject(s *streams, form jsonForm) (*workspace.Workspace, error) {
	ws, err := workspace.Open("", workspace.Options{Warnings: workspace.PrintWarnings(s.err)})
	if err != nil {
		return nil, form.refuse(s, err)
	}
	return ws, nil
}

// refuse reports err, why a command could not give its answer (a bad
// command line, its project cannot be opened, the run it names is not
// recorded), and returns its exit status (2 for a bad command line, a
// usageError, and 1 otherwise): the message on stderr, as every failure is
// told, and a command that writes JSON also writes the failure as JSON on
// stdout, so that a script that asked for JSON has some to read.
func (form jsonForm) refuse(s *streams, err error) error {
	var werr error
	switch form {
	case jsonObject:
		werr = writeJSON(s.out, failureOf(err))
	case jsonStream:
		werr = writeJSONLine(s.out, failureOf(err))
	}
	if werr != nil {
		return werr
	}
	if isUsageError(err) {
		return &exitCode{code: exitUsage, msg: err.Error()}
	}
	return &exitCode{code: exitFailure, msg: err.Error()}
}

// failureJSON is a command's failure in JSON: the error as stderr says it
// (a configuration's every error, one a line), and where the first of them
// is when it is in a file.
type failureJSON struct {
	Error string `json:"error"`
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Col   int    `json:"col,omitempty"`
}

func failureOf(err error) failureJSON {
	f := failureJSON{Error: err.Error()}
	var loadErr *config.LoadError
	if errors.As(err, &loadErr) {
		for _, d := range loadErr.Diagnostics {
			if d.File != "" {
				f.File, f.Line, f.Col = d.File, d.Line, d.Col
				break
			}
		}
	}
	return f
}
