package main

import (
	"fmt"
	"net"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/dap"
)

func newDAPCommand(s *streams) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "dap [--listen 127.0.0.1:PORT]",
		Short: "Serve the Debug Adapter Protocol, for debugging plans from an editor",
		Long: "Speak the Debug Adapter Protocol on stdin and stdout (or, with --listen, to one client that\n" +
			"connects over TCP), so that an editor (VS Code, Neovim's nvim-dap, Zed, Helix) debugs a plan\n" +
			"with its own debugging UI: breakpoints on a plan file's lines, function breakpoints on path\n" +
			"patterns (assess/do.*/verdict/agent.2 round), stepping, the stack, variables, and the\n" +
			"commands of stepwise debug in its debug console. One process debugs one run, launched with\n" +
			"program (a plan file or identifier), cwd, inputs, script, stopOnEntry, breakOnError and\n" +
			"noDebug. The README's Debugging section shows the editors' configurations.",
		Args: exactArgs(0, "no arguments (the plan comes in the launch request)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if listen == "" {
				// An editor that dies leaves the adapter's stdout a broken
				// pipe, whose SIGPIPE would kill the adapter before it
				// aborts and records the run: the write fails instead, and
				// the end of stdin ends the session as a disconnect does.
				signal.Ignore(syscall.SIGPIPE)
				return dap.NewServer(s.in, s.out).Serve(cmd.Context())
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return usageError{fmt.Errorf("--listen %s: %w; give HOST:PORT, e.g. 127.0.0.1:4711", listen, err)}
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				// Whoever connects runs plans and their tools as this user.
				fmt.Fprintf(s.err, "warning: %s is reachable from other machines; whoever connects runs plans and tools as you\n", listen)
			}
			return dap.Listen(cmd.Context(), listen, func(a net.Addr) {
				fmt.Fprintf(s.err, "stepwise dap: listening on %s\n", a)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "serve one DAP client that connects to this address (HOST:PORT; port 0 picks one) instead of stdin and stdout")
	return cmd
}
