package report_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/report"
)

// wideFiles are a project whose plan maps builtin__reshape over its items.
var wideFiles = map[string]string{
	".stepwise/config.toml": "",
	".stepwise/plans/wide.yaml": `identifier: wide
name: Wide
description: A map of many items.
input_schema:
  type: object
  properties:
    items: { type: array, items: { type: string } }
steps:
  - id: E1
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 8
      do:
        tool_name: builtin__reshape
        input: { shape: { title: "{{item}}", index: "{{index}}" } }
`,
}

// recordWide records the wide plan over n items.
func recordWide(tb testing.TB, n int) recorded {
	list := make([]any, n)
	for i := range list {
		list[i] = fmt.Sprintf("item %d", i)
	}
	return recordRun(tb, wideFiles, "wide", map[string]any{"items": list})
}

// BenchmarkWriteWideMap writes the report of a recorded map of 5,000
// items, each a body call with an input and a result: the size a page
// reaches and the time it takes grow with the units.
func BenchmarkWriteWideMap(b *testing.B) {
	run := recordWide(b, 5000)
	var size countingWriter
	if err := report.Write(&size, run.detail, run.events, run.redact); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := report.Write(io.Discard, run.detail, run.events, run.redact); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// countingWriter counts the bytes written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
