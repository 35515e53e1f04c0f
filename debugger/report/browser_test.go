package report_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromium is the browser the test drives: CI installs Debian's chromium
// package (.ci/run). A machine without it skips the test, except under
// CI=true, where it must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH, and CI=true: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the report is not tried in a browser (apt-get install chromium)")
	return ""
}

// pageState is what the page shows once loaded, read in the browser.
type pageState struct {
	Units, Rows, Bars, SpendBars int
	// Tree, Timeline and Spend are the rendered sizes of the three parts.
	Tree, Timeline, Spend box
	// ValueWrap is a value's white-space, which the style sheet sets:
	// pre-wrap says the sheet was applied under the page's policy.
	ValueWrap string
	// FailedOpen says the failed step is unfolded.
	FailedOpen bool
	// Closed is the id of a folded unit, to unfold.
	Closed string
}

type box struct{ W, H float64 }

const readPage = `(() => {
	const size = s => { const e = document.querySelector(s); if (!e) return {W: 0, H: 0}; const r = e.getBoundingClientRect(); return {W: r.width, H: r.height}; };
	const drawn = s => [...document.querySelectorAll(s)].filter(r => { const b = r.getBBox(); return b.width > 0 && b.height > 0; }).length;
	const closed = document.querySelector('#steps details.unit:not([open])');
	return {
		Units: document.querySelectorAll('#steps details.unit').length,
		Rows: document.querySelectorAll('svg.timeline a.row').length,
		Bars: drawn('svg.timeline rect.bar'),
		SpendBars: drawn('#spend rect.bar'),
		Tree: size('#steps > ul.tree'), Timeline: size('svg.timeline'), Spend: size('#spend svg'),
		ValueWrap: getComputedStyle(document.querySelector('pre.value')).whiteSpace,
		FailedOpen: document.querySelector('details.s-failed[open]') !== null,
		Closed: closed ? closed.id : '',
	};
})()`

// TestReportInBrowser opens the report of a real run in headless
// Chromium: the tree and the timeline render with sizes, a folded unit
// unfolds on a click, the console has no error or exception (a style the
// policy refused would be one), and the page asks the network for nothing.
// The page and a screenshot of it are kept when the test fails.
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	run := recordShowcase(t)
	dir, err := os.MkdirTemp("", "TestReportInBrowser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the page and its screenshot are kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(run.page(t)), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 1000),
	)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}

	// The console and the requests are read as they come, until the
	// marker the test writes last has arrived.
	var (
		mu       sync.Mutex
		messages []chromedp.ConsoleMessage
		requests []string
	)
	const marker = "report-test-done"
	done := make(chan struct{})
	console := chromedp.Console(tab)
	sent := chromedp.Events(tab, network.RequestWillBeSent)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Text == marker {
				close(done)
				return
			}
			mu.Lock()
			messages = append(messages, m)
			mu.Unlock()
		}
	}()
	go func() {
		for r, err := range sent {
			if err != nil {
				return
			}
			mu.Lock()
			requests = append(requests, r.Request.URL)
			mu.Unlock()
		}
	}()

	url := "file://" + file
	if err := chromedp.Do(tab, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#steps"))); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	state, err := chromedp.Run(tab, chromedp.Evaluate[pageState](readPage))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shotFile := filepath.Join(dir, "report.png")
	if err := os.WriteFile(shotFile, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shotFile)
	if img, err := png.DecodeConfig(bytes.NewReader(shot)); err != nil || img.Width == 0 || img.Height == 0 {
		t.Errorf("the screenshot is no picture: %v %+v", err, img)
	}

	// A unit is a step, a tool call or a model call the record holds,
	// counted once by its path.
	units := map[string]bool{}
	for _, s := range run.detail.Steps {
		units[s.Path] = true
	}
	for _, c := range run.detail.ToolCalls {
		units[c.Path] = true
	}
	for _, c := range run.detail.ModelCalls {
		units[c.Path] = true
	}
	if state.Units != len(units) {
		t.Errorf("%d units in the tree, want %d", state.Units, len(units))
	}
	if state.Rows == 0 || state.Bars < state.Rows {
		t.Errorf("the timeline has %d rows and %d bars drawn", state.Rows, state.Bars)
	}
	if state.SpendBars == 0 {
		t.Error("the spend has no bar drawn")
	}
	for name, b := range map[string]box{"tree": state.Tree, "timeline": state.Timeline, "spend": state.Spend} {
		if b.W <= 0 || b.H <= 0 {
			t.Errorf("the %s renders %gx%g", name, b.W, b.H)
		}
	}
	if state.ValueWrap != "pre-wrap" {
		t.Errorf("a value's white-space is %q: the style sheet was not applied", state.ValueWrap)
	}
	if !state.FailedOpen {
		t.Error("the failed step is folded")
	}

	// Folding is the browser's own: a click on a folded unit's summary
	// unfolds it.
	if state.Closed == "" {
		t.Fatal("no folded unit to unfold")
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#"+state.Closed+" > summary"))); err != nil {
		t.Fatal(err)
	}
	open, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("`+state.Closed+`").open`))
	if err != nil || !open {
		t.Errorf("a click on %s's summary left it folded (%v)", state.Closed, err)
	}

	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`console.log("`+marker+`")`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the console's last message never came")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range messages {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			t.Errorf("console %s: %s", m.Type, m.Text)
		} else {
			t.Logf("console %s: %s", m.Type, m.Text)
		}
	}
	for _, u := range requests {
		if u != url && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page asked for %s", u)
		}
	}
}
