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
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/tools/supervise"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Exit codes of the scripting contract.
const (
	exitOK      = workspace.ExitOK
	exitFailure = workspace.ExitFailure
	exitUsage   = workspace.ExitUsage
)

// exitCode is an error that carries the process exit status. Its message,
// when not empty, has already been printed or is printed by main.
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

func main() {
	os.Exit(runProcess())
}

// runProcess runs the process's command line with its standard streams
// and returns the exit status. A closed terminal (SIGHUP) or a kill
// (SIGTERM) unwinds like ctrl-c does: a run stops where it is and is
// recorded, MCP servers are shut down. Exec tools run under this binary as their supervisor (see
// newSuperviseCommand), which in-process tests of run leave off.
func runProcess() int {
	supervise.Enable()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ends := make(chan os.Signal, 1)
	signal.Notify(ends, syscall.SIGHUP, syscall.SIGTERM)
	defer signal.Stop(ends)
	go func() {
		select {
		case sig := <-ends:
			cancel(signalCause(sig))
		case <-ctx.Done():
		}
	}()
	ctrlC := make(chan os.Signal, 1)
	signal.Notify(ctrlC, os.Interrupt)
	defer signal.Stop(ctrlC)
	r := &interrupts{cancel: cancel}
	go r.route(ctx, ctrlC)
	return run(context.WithValue(ctx, interruptsKey{}, r), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// interrupts routes ctrl-c. Unclaimed, it cancels the command's context,
// as SIGTERM and SIGHUP do (each with a cause of its own, stopSignal); a
// command that gives ctrl-c a meaning of its own (debug: pause a going
// run) claims it, is told of each one, and cancels the context itself
// when it means to end.
type interrupts struct {
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	claimed chan struct{}
}

// interruptsKey is the context key of the process's interrupts; a command
// run in-process by a test has none.
type interruptsKey struct{}

// interruptsOf returns the interrupts of ctx, or nil.
func interruptsOf(ctx context.Context) *interrupts {
	r, _ := ctx.Value(interruptsKey{}).(*interrupts)
	return r
}

func (r *interrupts) route(ctx context.Context, ctrlC <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ctrlC:
		}
		r.mu.Lock()
		claimed := r.claimed
		r.mu.Unlock()
		if claimed == nil {
			r.cancel(errInterrupted)
			continue
		}
		select {
		case claimed <- struct{}{}:
		default:
			// One not yet heard is heard as one.
		}
	}
}

// claim makes ctrl-c a message on the channel it returns, until release
// is called. A nil r (no process signals) returns a channel that never
// says anything.
func (r *interrupts) claim() (heard <-chan struct{}, release func()) {
	if r == nil {
		return nil, func() {}
	}
	c := make(chan struct{}, 1)
	r.mu.Lock()
	r.claimed = c
	r.mu.Unlock()
	return c, func() {
		r.mu.Lock()
		r.claimed = nil
		r.mu.Unlock()
	}
}

// end cancels the command's context, as an unclaimed ctrl-c does.
func (r *interrupts) end() {
	if r != nil {
		r.cancel(errInterrupted)
	}
}

// stopSignal is the cause of the command's context when a signal
// cancelled it, in the words a run's error and its steps cut short say
// it with: "run aborted at E2: interrupted (ctrl-c)".
type stopSignal struct{ words string }

func (s stopSignal) Error() string { return s.words }

// Is makes the cause a cancellation, as a context's own is.
func (stopSignal) Is(target error) bool { return target == context.Canceled }

// The causes of the signals that stop a command.
var (
	errInterrupted error = stopSignal{"interrupted (ctrl-c)"}
	errTerminated  error = stopSignal{"terminated (SIGTERM)"}
	errHungUp      error = stopSignal{"the terminal hung up (SIGHUP)"}
)

// signalCause is the cause of the context sig cancelled.
func signalCause(sig os.Signal) error {
	if sig == syscall.SIGHUP {
		return errHungUp
	}
	return errTerminated
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
	// Help asked for (--help, help CMD) and --version are what the command
	// was run for: they go to stdout, so that stepwise --help | less reads
	// them. Errors, usage errors among them, go to stderr.
	root.SetOut(stdout)
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
		Args:          rootArgs,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorkbench(cmd.Context(), s, args)
		},
	}
	root.AddCommand(newValidateCommand(s), newRunCommand(s), newDebugCommand(s), newDAPCommand(s), newSchemaCommand(s), newToolsCommand(s), newDemoCommand(s), newDemoMCPCommand(), newMCPCommand(s), newModelsCommand(s), newRunsCommand(s), newInspectCommand(s), newReportCommand(s), newReplayCommand(s), newForkCommand(s), newDiffCommand(s), newSuperviseCommand())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{flagValueError(err)} })
	// Every command's help is wrapped at helpWidth: its description here,
	// its flags by the template, which the subcommands inherit.
	wrapDescriptions(root)
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages", fmt.Sprintf(".FlagUsagesWrapped %d", helpWidth)))
	return root
}

// wrapDescriptions wraps the long description of cmd and of every command
// under it at helpWidth, paragraph by paragraph, so that the sources need
// not keep their line breaks to a width. A paragraph with an indented line
// (a list of commands, an example) is laid out by hand and kept as it is.
func wrapDescriptions(cmd *cobra.Command) {
	paragraphs := strings.Split(cmd.Long, "\n\n")
	for i, p := range paragraphs {
		if p == "" || strings.Contains("\n"+p, "\n ") {
			continue
		}
		paragraphs[i] = strings.Join(wrapWords(p, helpWidth), "\n")
	}
	cmd.Long = strings.Join(paragraphs, "\n\n")
	for _, sub := range cmd.Commands() {
		wrapDescriptions(sub)
	}
}

// version is the module version the binary was built from, with the
// commit when the build recorded one: "(devel) 1a2b3c4d5e6f".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += " (modified)"
		}
	}
	return v
}

// rootArgs accepts at most one argument, a plan file or a directory. A word
// that is neither, but is close to a subcommand, is a mistyped subcommand.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if !c.Hidden {
			names = append(names, c.Name())
		}
	}
	_, statErr := os.Stat(args[0])
	if statErr != nil {
		if s := suggest.Closest(args[0], names); s != "" {
			return usageError{fmt.Errorf("unknown command '%s'; did you mean '%s'?", args[0], s)}
		}
	}
	switch {
	case len(args) > 1:
		return usageError{fmt.Errorf("stepwise takes one PLAN or DIR, not %d arguments; see stepwise --help", len(args))}
	case statErr != nil:
		return usageError{fmt.Errorf("'%s' is neither a plan file, a directory nor a command (%s)", args[0], strings.Join(names, ", "))}
	}
	return nil
}

// usageError marks a bad command line (exit 2).
type usageError struct{ error }

// exactArgs is cobra.ExactArgs answering with a usage error that names what
// the command takes.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s takes %s; see %s --help", cmd.CommandPath(), what, cmd.CommandPath())}
		}
		return nil
	}
}

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// newSuperviseCommand is the supervisor of exec tools, one per stepwise
// process, started at the first tool call, which kills everything a tool
// started when the call ends or when stepwise dies
// (engine/tools/supervise). stepwise starts it with a socket of its own on
// descriptor 3; it is hidden because nobody types it.
func newSuperviseCommand() *cobra.Command {
	return &cobra.Command{
		Use:                supervise.Subcommand,
		Short:              "Run exec tools, and kill everything each started when it ends",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return supervise.Run(args)
		},
	}
}
