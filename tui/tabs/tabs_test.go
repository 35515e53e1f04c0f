package tabs

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

func load(t *testing.T, file string) workspace.Document {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, r := plans.Load(file, src, plans.Stepwise)
	return workspace.Document{File: file, Plan: p, Report: r}
}

// TestTabs checks the tab strip keeps the current plan in view however
// narrow it is, and that clicks land on what is drawn.
func TestTabs(t *testing.T) {
	pr := load(t, "../testdata/pr_review.yaml")
	tr := load(t, "../testdata/triage.yaml")
	theme := common.NewTheme(true, false)
	docs := []workspace.Document{pr, tr, pr, tr, pr, tr}
	for _, width := range []int{20, 30, 45, 80, 200} {
		for cur := range docs {
			m := Strip{Docs: docs, Current: cur}
			strip := ansi.Strip(m.View(theme, width))
			name := "[" + docs[cur].Name()
			x := strings.Index(strip, name)
			if x < 0 {
				t.Fatalf("width %d, plan %d: current tab missing from %q", width, cur, strip)
			}
			if ansi.StringWidth(strip) > width && width >= 20 {
				t.Errorf("width %d: strip %q too wide", width, strip)
			}
			col := ansi.StringWidth(strip[:x])
			if got, ok := m.At(col+1, width); !ok || got != cur {
				t.Errorf("width %d: click on the current tab at %d gave %d %v, want %d", width, col+1, got, ok, cur)
			}
		}
	}
}
