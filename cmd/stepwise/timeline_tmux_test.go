package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// slowMapFiles are a project whose plan maps a slow scripted model over
// eight items, two at a time: a run long enough to watch its timeline.
var slowMapFiles = map[string]string{
	"config.toml": `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 2.50
output = 10.00
`,
	"replies.yaml": "replies:\n" + strings.Repeat(
		"  - { match: \"E1/do.*\", reply: { text: seen, usage: { input_tokens: 100, output_tokens: 5 }, delay_ms: 700 } }\n", 8),
	"plans/slowmap.yaml": `identifier: slowmap
name: Slow map
description: Asks a slow model about eight items, two at a time.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c, d, e, f, g, h]
      concurrency: 2
      do: { tool_name: builtin__infer, input: { instruction: "Look at {{item}}" } }
`,
}

// TestWorkbenchTimelineTmux drives the real binary in tmux through a run
// of the slow map: w mid-run shows the Timeline, whose bars grow between
// two looks; $ shows the spend, the items under their body step; once
// the run ended, + and - zoom, changing the axis and back; and on the
// spend, right unfolds the map's items.
func TestWorkbenchTimelineTmux(t *testing.T) {
	writeProject(t, slowMapFiles)
	dir, _ := os.Getwd()
	s := startTmux(t, 120, 40, "env", cliEnv+"=1", "GORACE=atexit_sleep_ms=0", "HOME="+os.Getenv("HOME"),
		"XDG_CONFIG_HOME="+os.Getenv("XDG_CONFIG_HOME"), "XDG_DATA_HOME="+os.Getenv("XDG_DATA_HOME"),
		"TERM=xterm-256color", os.Args[0], dir)
	s.waitFor("slowmap")

	s.keys("r")
	s.waitFor("do.0")
	// The map's row counts its items as they end; the status line says
	// the rest.
	s.waitFor("map  2/8")
	s.waitFor("E1 2/8 items · ")
	s.keys("w")
	s.waitFor("╭─ Timeline")
	first := s.waitFor("do.1 ")
	s.waitFor("do.4 ")
	second := s.screen()
	if strings.Contains(first, "w timeline · $ spend") {
		t.Fatalf("the run ended before the first look at its timeline:\n%s", first)
	}
	rows1, cells1 := barsOf(t, first)
	rows2, cells2 := barsOf(t, second)
	if rows2 <= rows1 || cells2 <= cells1 {
		t.Errorf("the timeline did not grow: %d rows of %d cells, then %d of %d\nfirst:\n%s\nthen:\n%s", rows1, cells1, rows2, cells2, first, second)
	}

	s.typed("$")
	s.waitFor("By step, most expensive first")
	s.waitFor("E1/do.* ×")
	s.waitFor("script/scripted")

	s.keys("w")
	s.waitFor("╭─ Timeline")
	s.waitFor("w timeline · $ spend") // the run ended
	s.keys("Tab")
	s.waitFor("┏━ Timeline")
	whole := s.waitFor("whole run · +/- zoom · ←/→ pan")
	axis := axisOf(t, whole)
	s.typed("+")
	// The footer says the stretch in view: 1.2s–2.4s · +/- zoom.
	zoomed := axisOf(t, s.waitFor("s · +/- zoom · ←/→ pan"))
	if zoomed == axis {
		t.Errorf("+ did not change the axis: %q", axis)
	}
	s.typed("-")
	if back := axisOf(t, s.waitFor("whole run · +/- zoom")); back != axis {
		t.Errorf("- did not bring the whole run's axis back: %q, was %q", back, axis)
	}

	// On the spend, right unfolds the map's line into every item.
	s.typed("$")
	s.waitFor("and 5 more items")
	s.keys("j", "Right")
	screen := s.waitFor("E1/do.7 ")
	if strings.Contains(screen, "more items") {
		t.Errorf("the map's line is unfolded and still says there are more items:\n%s", screen)
	}
}

// timelinePane is the lines inside the Timeline pane's frame on a screen.
func timelinePane(t *testing.T, screen string) []string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for i, line := range lines {
		r := []rune(line)
		col := -1
		for _, title := range []string{"╭─ Timeline", "┏━ Timeline"} {
			if at := strings.Index(line, title); at >= 0 {
				col = len([]rune(line[:at]))
			}
		}
		if col < 0 || col >= len(r) {
			continue
		}
		var pane []string
		for _, l := range lines[i+1:] {
			lr := []rune(l)
			if len(lr) <= col+1 || strings.ContainsRune("╰┗", lr[col]) {
				break
			}
			pane = append(pane, strings.TrimRight(string(lr[col+1:]), " │┃"))
		}
		return pane
	}
	t.Fatalf("no Timeline pane on the screen:\n%s", screen)
	return nil
}

// barsOf counts the Timeline's rows of items and the cells their bars
// fill.
func barsOf(t *testing.T, screen string) (rows, cells int) {
	t.Helper()
	for _, line := range timelinePane(t, screen) {
		if !strings.Contains(line, "do.") {
			continue
		}
		rows++
		cells += strings.Count(line, "█") + strings.Count(line, "▒") + strings.Count(line, "─")
	}
	return rows, cells
}

// axisOf is the Timeline's time axis: the line of its ticks.
func axisOf(t *testing.T, screen string) string {
	t.Helper()
	for _, line := range timelinePane(t, screen) {
		if strings.Contains(line, "╵") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("no axis in the Timeline pane:\n%s", screen)
	return ""
}

// TestInspectTimelineTmuxColors prints a waterfall on a terminal: in the
// workbench's colours, and with NO_COLOR in none.
func TestInspectTimelineTmuxColors(t *testing.T) {
	id := retimedRun(t)
	colour := regexp.MustCompile("\x1b\\[[0-9;]*3[0-9;]*m")
	for _, tc := range []struct {
		env    []string
		colour bool
	}{{nil, true}, {[]string{"NO_COLOR=1"}, false}} {
		s := startStepwise(t, 100, 30, tc.env, "inspect", id, "--timeline")
		s.waitFor("exit 0")
		screen := s.run("capture-pane", "-p", "-e", "-t", "0")
		if !strings.Contains(screen, " model  ") {
			t.Fatalf("no waterfall:\n%s", screen)
		}
		if got := colour.MatchString(screen); got != tc.colour {
			t.Errorf("env %v: colours %v, want %v:\n%q", tc.env, got, tc.colour, screen)
		}
	}
}
