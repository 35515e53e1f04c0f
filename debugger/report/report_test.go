package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/report"
	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// TestPageOfARecordedRun writes the report of a real recorded run and
// checks what a reader of the page relies on: values stay text, the
// secret is hidden, a long payload is cut with a marker, nothing is
// fetched, and the tree, the model calls, the timeline and the spend are
// all there.
func TestPageOfARecordedRun(t *testing.T) {
	run := recordShowcase(t)
	page := run.page(t)
	step := func(p string) record.StepRecord {
		for _, s := range run.detail.Steps {
			if s.Path == p {
				return s
			}
		}
		t.Fatalf("the record has no step %s", p)
		return record.StepRecord{}
	}

	t.Run("values stay text", func(t *testing.T) {
		for _, tag := range []string{"<img", "<script", "<b>", "</b>"} {
			if strings.Contains(strings.ToLower(page), tag) {
				t.Errorf("the page holds the markup %s", tag)
			}
		}
		// Each place the hostile value was recorded shows it escaped:
		// the inputs, the map's item, its result, the agent's tool call
		// and the reply.
		escaped := html.EscapeString(hostile)
		if n := strings.Count(page, escaped); n < 5 {
			t.Errorf("the hostile value shows escaped %d times, want 5 or more", n)
		}
		if !strings.Contains(page, html.EscapeString("the disk is full </b><b>")) {
			t.Error("the failed step's error is not shown as text")
		}
	})

	t.Run("the links at the top are in page order", func(t *testing.T) {
		nav := page[strings.Index(page, "<nav>"):]
		nav = nav[:strings.Index(nav, "</nav>")]
		last, links := -1, 0
		for _, part := range strings.Split(nav, `href="#`)[1:] {
			id, _, _ := strings.Cut(part, `"`)
			at := strings.Index(page, `<section id="`+id+`">`)
			if at < 0 || at < last {
				t.Errorf("the link to #%s is out of the page's order (%s)", id, nav)
			}
			last, links = at, links+1
		}
		if links < 4 || !strings.Contains(nav, "#problems") {
			t.Errorf("the links do not reach the errors and warnings: %s", nav)
		}
	})

	t.Run("the secret is hidden", func(t *testing.T) {
		// The run store keeps the secret as its reference already.
		if got := string(step("E1").Result); strings.Contains(got, canary) || !strings.Contains(got, "${"+canaryVar+"}") {
			t.Fatalf("E1 was recorded as %s, want the secret's reference", got)
		}
		if strings.Contains(page, canary) {
			t.Error("the page shows the secret")
		}
		if !strings.Contains(page, "token is ${"+canaryVar+"}") {
			t.Error("the page does not show the secret's reference where the tool printed it")
		}
		// A record made before the store hid secrets holds them as they
		// were: the page hides them itself.
		detail := *run.detail
		detail.Error = "the tool said: token is " + canary
		older := recorded{detail: &detail, events: run.events, redact: run.redact}
		if p := older.page(t); strings.Contains(p, canary) || !strings.Contains(p, "token is ${"+canaryVar+"}") {
			t.Error("a secret in an older record shows on its page")
		}
	})

	t.Run("a long payload is cut", func(t *testing.T) {
		var whole bytes.Buffer
		if err := json.Indent(&whole, step("E3").Result, "", "  "); err != nil {
			t.Fatal(err)
		}
		marker := regexp.MustCompile(`… ([0-9,]+) bytes cut`)
		found := marker.FindAllStringSubmatch(page, -1)
		if len(found) != 1 {
			t.Fatalf("%d cut markers, want the one of E3's result", len(found))
		}
		cut, _ := strconv.Atoi(strings.ReplaceAll(found[0][1], ",", ""))
		if want := whole.Len() - report.MaxValue; cut != want {
			t.Errorf("the marker says %d bytes cut, want %d", cut, want)
		}
		if len(page) > whole.Len() {
			t.Errorf("the page is %d bytes, more than the payload it should have cut", len(page))
		}
	})

	t.Run("nothing is fetched", func(t *testing.T) {
		for _, scheme := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(page, scheme) {
				t.Errorf("the page holds %q", scheme)
			}
		}
		for _, tag := range []string{"<link", "<iframe", "<object", "<embed", "<video", "<audio", "<base"} {
			if strings.Contains(page, tag) {
				t.Errorf("the page holds the element %s", tag)
			}
		}
		attr := regexp.MustCompile(`\b(src|href|action|formaction|poster|srcset|data|xlink:href)\s*=\s*"([^"]*)"`)
		for _, m := range attr.FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(m[2], "#") {
				t.Errorf("%s=%q leaves the page", m[1], m[2])
			}
		}
		for _, m := range regexp.MustCompile(`url\(([^)]*)\)`).FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(m[1], "#") {
				t.Errorf("url(%s) leaves the page", m[1])
			}
		}
		if !strings.Contains(page, `content="default-src &#39;none&#39;; style-src &#39;sha256-`) {
			t.Error("the page has no content security policy that forbids fetching")
		}
	})

	t.Run("the tree holds every unit", func(t *testing.T) {
		for _, s := range run.detail.Steps {
			if !strings.Contains(page, `<code class="path" title="`+s.Path+`">`) {
				t.Errorf("no node for step %s", s.Path)
			}
		}
		for _, c := range run.detail.ToolCalls {
			if !strings.Contains(page, `<code class="path" title="`+c.Path+`">`) {
				t.Errorf("no node for tool call %s", c.Path)
			}
		}
		// A unit shows its path below its parent's.
		for _, want := range []string{`title="E4/agent.1">agent.1</code> <span class="tool">round</span>`, `title="E4/agent.1/user__token">user__token</code> <span class="took">`, `title="E2/do.1">do.1</code>`} {
			if !strings.Contains(page, want) {
				t.Errorf("the tree lacks %s", want)
			}
		}
		failed := regexp.MustCompile(`<details id="u\d+" class="unit u-step s-failed" open>\s*<summary><span class="glyph" title="failed"></span><code class="path" title="E6">E6</code>`)
		if !failed.MatchString(page) {
			t.Error("the failed step E6 is not unfolded")
		}
	})

	t.Run("model calls show messages, tools and reply", func(t *testing.T) {
		for _, want := range []string{
			"Look at ",                                     // the first round's prompt
			"<code>builtin__reshape</code>",                // a tool offered
			"<code>user__token</code>",                     // the other
			"→</span> <code>builtin__reshape",              // the reply's tool call
			"The first 2 messages are the previous call's", // round 2 shows what it adds
			"fine " + html.EscapeString(hostile),           // the answer
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if n := strings.Count(page, `<details class="call"`); n != 4 {
			t.Errorf("%d model calls shown, want 4: E4's rounds, E5's round and its repair", n)
		}
		if !strings.Contains(page, "agent_not_final: 1 agent step spent its rounds without a valid answer") {
			t.Error("the page does not find that E5 ended without an answer")
		}
		if !strings.Contains(page, `title="E5/agent.1/repair">repair</code>`) {
			t.Error("the repair pass has no node")
		}
	})

	t.Run("the timeline and the spend are drawn", func(t *testing.T) {
		rows := strings.Count(page, `<a href="#u`) - strings.Count(page, `<li class="note-`)
		want := timeline.FromEvents(run.events).Len()
		if got := len(regexp.MustCompile(`class="row( failed)?"`).FindAllString(page, -1)); got != want {
			t.Errorf("%d timeline rows, want %d (a row per unit)", got, want)
		}
		if n := strings.Count(page, `class="row failed"`); n != 1 {
			t.Errorf("%d rows drawn as failed, want E6's", n)
		}
		if rows < want {
			t.Errorf("%d links to the tree, fewer than the rows", rows)
		}
		// E4 spent most, so its bar comes first.
		for _, want := range []string{"By step", "By model", `<text class="label" x="0" y="13">E4</text>`, `<text class="label" x="0" y="31">E5</text>`, "script/scripted", "$0.0080"} {
			if !strings.Contains(page, want) {
				t.Errorf("the spend lacks %q", want)
			}
		}
	})
}

// TestWideRunDrawsPartOfItsTimeline records a map of more items than the
// timeline draws: it draws the first rows and says how many it left out,
// while the tree holds every item.
func TestWideRunDrawsPartOfItsTimeline(t *testing.T) {
	const items = 700
	run := recordWide(t, items)
	page := run.page(t)
	all := timeline.FromEvents(run.events).Len()
	rows := strings.Count(page, `class="row"`)
	if rows >= all || rows == 0 {
		t.Fatalf("%d rows drawn of %d units", rows, all)
	}
	if want := fmt.Sprintf("%d more units are not drawn", all-rows); !strings.Contains(page, want) {
		t.Errorf("the page does not say %q", want)
	}
	if n := strings.Count(page, `<details id="u`); n != items+1 {
		t.Errorf("%d units in the tree, want the map and its %d items", n, items)
	}
}

// TestSpendGroupsMapItems records a map of thirty items, each a priced
// model call, one dearer than the rest: the spend by step draws the map's
// items as one line, its count of items, and the dearest three under it,
// the dear one first, not a line an item.
func TestSpendGroupsMapItems(t *testing.T) {
	replies := "replies:\n  - { match: E1/do.7, reply: { text: dear, usage: { input_tokens: 9000, output_tokens: 10 } } }\n"
	for range 29 {
		replies += "  - { match: \"E1/do.*\", reply: { text: cheap, usage: { input_tokens: 100, output_tokens: 10 } } }\n"
	}
	files := map[string]string{
		".stepwise/config.toml": "[providers.script]\ntype = \"script\"\nfile = \"replies.yaml\"\n\n[models]\ndefault = { provider = \"script\", model = \"scripted\" }\n\n[pricing.scripted]\ninput = 2.50\noutput = 10.00\n",
		"replies.yaml":          replies,
		".stepwise/plans/asks.yaml": `identifier: asks
name: Asks
description: Asks a model about each item.
input_schema:
  type: object
  properties:
    items: { type: array, items: { type: string } }
steps:
  - id: E1
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 4
      do: { tool_name: builtin__infer, input: { instruction: "Look at {{item}}" } }
`,
	}
	list := make([]any, 30)
	for i := range list {
		list[i] = fmt.Sprintf("item %d", i)
	}
	page := recordRun(t, files, "asks", map[string]any{"items": list}).page(t)
	chart := page[strings.Index(page, `<figcaption>By step</figcaption>`):]
	chart = chart[:strings.Index(chart, `</figure>`)]
	if n := strings.Count(chart, `<g class="spend-row">`); n != 4 {
		t.Errorf("%d rows by step, want the map's and its dearest three items':\n%s", n, chart)
	}
	for _, want := range []string{`>E1/do.* ×30</text>`, `30 items`, `the dearest E1/do.7`, `class="bar k-spend-item"`} {
		if !strings.Contains(chart, want) {
			t.Errorf("the spend by step lacks %q:\n%s", want, chart)
		}
	}
	// An infer's call is its model's: no tool time, not even a pixel of
	// it, on its row or striping the map's.
	waterfall := page[strings.Index(page, `<section id="timeline">`):]
	waterfall = waterfall[:strings.Index(waterfall, `</section>`)]
	if n := strings.Count(waterfall, `class="bar k-tool"`); n != 0 {
		t.Errorf("the timeline draws %d tool stretches in a map of infer calls:\n%s", n, waterfall)
	}
	if strings.Contains(waterfall, "tool 0ms") {
		t.Errorf("a row's title says tool 0ms:\n%s", waterfall)
	}
	group, dear, cheap := strings.Index(chart, `>E1/do.* ×30<`), strings.Index(chart, `>E1/do.7<`), strings.Index(chart, `>E1/do.0<`)
	if group < 0 || dear < group || cheap < dear {
		t.Errorf("the dear item is not the first under the map's line:\n%s", chart)
	}
}

// TestItemsInIndexOrder records a map of two items, two at a time, whose
// first item's first step takes longer than the whole of the second
// item: the report's tree lists each item's units together, in the
// order of the items, not in the order the units began (do.1's steps
// between do.0's).
func TestItemsInIndexOrder(t *testing.T) {
	files := map[string]string{
		".stepwise/config.toml": "[storage]\nbackend = \"sqlite\"\n",
		".stepwise/tools/nap.yaml": `
name: nap
description: Sleeps a while.
kind: exec
command: sh
args: ["-c", "sleep {{input.secs}}; echo '{}'"]
output: json
input_schema: { type: object, properties: { secs: { type: number } } }
`,
		".stepwise/plans/pair.yaml": `
identifier: pair
name: Pair
description: Two items, the first slow.
steps:
  - id: E1
    tool_name: map
    input:
      over: [0.5, 0]
      concurrency: 2
      do:
        - id: a
          tool_name: user__nap
          input: { secs: "{{item}}" }
        - id: b
          tool_name: builtin__reshape
          input: { shape: { n: "{{index}}" } }
`,
	}
	page := recordRun(t, files, "pair", nil).page(t)
	var order []string
	for _, m := range regexp.MustCompile(`<code class="path" title="(E1/do\.\d/[ab])"`).FindAllStringSubmatch(page, -1) {
		order = append(order, m[1])
	}
	if want := []string{"E1/do.0/a", "E1/do.0/b", "E1/do.1/a", "E1/do.1/b"}; !slices.Equal(order, want) {
		t.Errorf("the tree lists %v, want %v", order, want)
	}
}

// TestSummedModelTimeSaysSo maps four items at once, each a model call of
// 200ms: the map's tooltip says its model time is its items' calls added
// up, which is more than its own time.
func TestSummedModelTimeSaysSo(t *testing.T) {
	files := map[string]string{
		".stepwise/config.toml": "[providers.script]\ntype = \"script\"\nfile = \"replies.yaml\"\n\n[models]\ndefault = { provider = \"script\", model = \"scripted\" }\n",
		"replies.yaml":          "replies:\n" + strings.Repeat("  - { match: \"E1/do.*\", reply: { text: seen, delay_ms: 200 } }\n", 4),
		".stepwise/plans/asks.yaml": `identifier: asks
name: Asks
description: Asks a model about each item at once.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c, d]
      concurrency: 4
      do: { tool_name: builtin__infer, input: { instruction: "Look at {{item}}" } }
`,
	}
	page := recordRun(t, files, "asks", nil).page(t)
	title := regexp.MustCompile(`<title>(E1 [^<]*)</title>`).FindStringSubmatch(page)
	if title == nil || !strings.Contains(title[1], "(the calls of its items, added up)") {
		t.Errorf("the map's tooltip: %q", title)
	}
}
