package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/report"
	"github.com/stepwise-dev/stepwise/tui/format"
)

func newReportCommand(s *streams) *cobra.Command {
	var html string
	cmd := &cobra.Command{
		Use:   "report RUN --html FILE",
		Short: "Write a recorded run as one HTML page to share",
		Long: "Write the run RUN names (its id, or a prefix of it that no other run shares) as one\n" +
			"self-contained HTML file: its step tree, each step's input, result and error, every model\n" +
			"call with its messages, the tools it offered and its reply, the timeline and the spend.\n" +
			"The page loads nothing from the network, so it can be attached to a pull request or an\n" +
			"issue and opened anywhere. Secrets the configuration expanded are hidden as ${VAR}, and\n" +
			"a value longer than 16 KiB is cut with a note of how much; inspect --json gives it whole.\n" +
			"--html - writes the page to stdout.",
		Args: exactArgs(1, "one RUN id (or a prefix of it; stepwise runs lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" {
				return usageError{fmt.Errorf("%s needs --html FILE, the file to write the page to (- for stdout)", cmd.CommandPath())}
			}
			ws, err := openProject(s, noJSON)
			if err != nil {
				return err
			}
			defer ws.Close()
			d, events, err := ws.RunEvents(cmd.Context(), args[0])
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			var page bytes.Buffer
			if err := report.Write(&page, d, events, ws.Redact); err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			if html == "-" {
				_, err := s.out.Write(page.Bytes())
				return err
			}
			if err := writeFileWhole(html, page.Bytes()); err != nil {
				return &exitCode{code: exitFailure, msg: fmt.Sprintf("--html %s: %v", html, err)}
			}
			fmt.Fprintf(s.err, "wrote %s (%s): run %s of %s\n", html, format.Bytes(int64(page.Len())), format.ShortID(d.ID), d.Plan)
			return nil
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write the page to this file (- for stdout)")
	return cmd
}

// writeFileWhole writes data to file through a temporary file beside it,
// renamed into place: a failure never leaves half a page where an earlier
// report was.
func writeFileWhole(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
