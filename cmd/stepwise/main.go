// Command stepwise is the terminal workbench for authoring and debugging
// agent plans, and the headless runner for scripts and CI. Every subcommand
// is glue over the plans, engine and tui packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// Exit codes of the scripting contract.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitCode is an error that carries the process exit status. Its message,
// when not empty, has already been printed or is printed by main.
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// streams are the standard streams a command writes to: stdout carries the
// deliverable only, everything human goes to stderr.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// run executes the command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &streams{in: stdin, out: stdout, err: stderr}
	root := newRootCommand(s)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stderr)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ec *exitCode
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(stderr, "stepwise:", ec.msg)
		}
		return ec.code
	}
	fmt.Fprintln(stderr, "stepwise:", err)
	if isUsageError(err) {
		return exitUsage
	}
	return exitFailure
}

func newRootCommand(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "stepwise [PLAN | DIR]",
		Short: "Author, run and debug agent plans in the terminal",
		Long: "Stepwise shows a plan as a step tree, checks it as you write it, and runs and debugs it.\n\n" +
			"With no argument it opens the embedded demo project; with a plan file it opens that plan;\n" +
			"with a directory it opens the plans of the project found there (.stepwise/ or .graph/).",
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorkbench(cmd.Context(), s, args)
		},
	}
	root.AddCommand(newValidateCommand(s), newToolsCommand(s), newDemoCommand(s), newDemoMCPCommand())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{err} })
	return root
}

// usageError marks a bad command line (exit 2).
type usageError struct{ error }

func isUsageError(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	// cobra reports unknown commands and wrong argument counts as plain
	// errors; they are usage errors all the same.
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
