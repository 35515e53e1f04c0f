package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// processCost is what one stepwise process cost: its wall time and the
// CPU time (user and system) the kernel counted for it.
type processCost struct {
	wall, cpu time.Duration
}

// runBinary runs the stepwise executable with args in dir, with empty
// global directories, and fails the benchmark unless it exits 0.
func runBinary(b *testing.B, bin, dir string, args ...string) processCost {
	b.Helper()
	return runBinaryWith(b, bin, dir, []string{"STEPWISE_STORAGE="}, args...)
}

// runBinaryWith is runBinary with the environment variables env set.
func runBinaryWith(b *testing.B, bin, dir string, env []string, args ...string) processCost {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	home := filepath.Join(dir, "home")
	cmd.Env = append(append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data")), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("stepwise %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	wall := time.Since(start)
	return processCost{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// chainPlan is a plan of n builtin__reshape steps, each reading the output
// of the one before it. Every step's input and output are of one size, so
// that what a step costs does not depend on where it is in the chain (a
// tag that grew by a word a step made the chain's payloads, and the bytes
// the store writes, grow with the square of its length).
func chainPlan(n int) string {
	var src strings.Builder
	src.WriteString("identifier: chain\nname: chain\ndescription: a chain of reshapes\nsteps:\n  - id: S0\n    tool_name: builtin__reshape\n    input: { shape: { n: 0, tag: step 0 } }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&src, "  - id: S%d\n    tool_name: builtin__reshape\n    input: { shape: { n: \"{{S%d.n}}\", tag: \"step %d\" } }\n", i, i-1, i)
	}
	return src.String()
}

// writePlans writes each plan into a new directory under the name it is
// given and returns the directory.
func writePlans(b *testing.B, files map[string]string) string {
	b.Helper()
	dir := b.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkValidateSmallPlan is the whole cost of `stepwise validate` on a
// one-step plan, process start and exit included: mostly the program's
// initialisation. cpu-ms/op is the user and system time the process
// was charged.
func BenchmarkValidateSmallPlan(b *testing.B) {
	bin := stepwiseBinary(b)
	dir := writePlans(b, map[string]string{"small.yaml": chainPlan(1)})
	var cpu time.Duration
	for b.Loop() {
		cpu += runBinary(b, bin, dir, "validate", "small.yaml").cpu
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkRunChainPerStep is what one more step costs a whole
// `stepwise run`, the run store on: each iteration runs a 1-step and a
// 1,000-step chain of reshapes, and ns/step is the difference over 999.
// Loading and checking the plan grows with it too; run-ns/step leaves that
// part out (the same difference for `stepwise validate` of the two plans,
// subtracted), which is what running and recording one more step cost
// beyond the program's start.
func BenchmarkRunChainPerStep(b *testing.B) {
	benchRunChain(b, "")
}

// BenchmarkRunChainPerStepMemory is BenchmarkRunChainPerStep with the run
// store off ([storage] backend = "memory").
func BenchmarkRunChainPerStepMemory(b *testing.B) {
	benchRunChain(b, "[storage]\nbackend = \"memory\"\n")
}

func benchRunChain(b *testing.B, config string) {
	bin := stepwiseBinary(b)
	dir := writePlans(b, map[string]string{"one.yaml": chainPlan(1), "thousand.yaml": chainPlan(1000)})
	if config != "" {
		if err := os.MkdirAll(filepath.Join(dir, ".stepwise"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), []byte(config), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var one, thousand, checkOne, checkThousand processCost
	add := func(sum *processCost, c processCost) { sum.wall, sum.cpu = sum.wall+c.wall, sum.cpu+c.cpu }
	for b.Loop() {
		add(&one, runBinary(b, bin, dir, "run", "one.yaml"))
		add(&thousand, runBinary(b, bin, dir, "run", "thousand.yaml"))
		add(&checkOne, runBinary(b, bin, dir, "validate", "one.yaml"))
		add(&checkThousand, runBinary(b, bin, dir, "validate", "thousand.yaml"))
	}
	perStep := func(d1, d1000 time.Duration) float64 {
		return float64(d1000-d1) / float64(b.N) / 999
	}
	b.ReportMetric(perStep(one.wall, thousand.wall), "ns/step")
	b.ReportMetric(perStep(one.cpu, thousand.cpu), "cpu-ns/step")
	b.ReportMetric(perStep(one.wall, thousand.wall)-perStep(checkOne.wall, checkThousand.wall), "run-ns/step")
	b.ReportMetric(perStep(one.cpu, thousand.cpu)-perStep(checkOne.cpu, checkThousand.cpu), "run-cpu-ns/step")
	b.ReportMetric(float64(one.wall)/float64(b.N)/1e6, "ms/1-step-run")
}

// mapPlan maps its input items through a reshape, at concurrency 64: the
// plan BenchmarkMap10k and BenchmarkMap10kStore (package engine) run in
// process, here run as a user runs it.
const mapPlan = `identifier: fan
name: fan
description: A wide map.
input_schema:
  type: object
  properties:
    items: { type: array }
steps:
  - id: E1
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 64
      do:
        tool_name: builtin__reshape
        input: { shape: { id: "{{item.id}}", title: "#{{index}} {{item.title}}" } }
`

// mapItems is the JSON of the inputs of mapPlan with n items.
func mapItems(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"CHK-%d","title":"checkout times out"}`, i)
	}
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

// BenchmarkRecordingTime reports what recording costs a 10,000-item map
// in wall time, as BenchmarkRecordingMemory does in memory: each
// iteration runs `stepwise run` of the map with the run store off and on,
// each in a process of its own, interleaved. time-ratio is recorded over
// unrecorded (the target is 2 or less); run-ratio leaves the program's
// start out of both, each less the same run of a one-item map (start-up,
// loading the plan, opening the store). BenchmarkMap10kStore over
// BenchmarkMap10k (package engine) compares the engine alone, recording
// every event against building none: a stricter figure than a user
// sees, whose unrecorded run still builds the events its progress
// display reads.
func BenchmarkRecordingTime(b *testing.B) {
	bin := stepwiseBinary(b)
	dir := writePlans(b, map[string]string{"fan.yaml": mapPlan, "items.json": mapItems(10_000), "one.json": mapItems(1)})
	off, on := []string{"STEPWISE_STORAGE=memory"}, []string{"STEPWISE_STORAGE="}
	var offMap, onMap, offOne, onOne time.Duration
	for b.Loop() {
		offMap += runBinaryWith(b, bin, dir, off, "run", "fan.yaml", "@items.json").wall
		onMap += runBinaryWith(b, bin, dir, on, "run", "fan.yaml", "@items.json").wall
		offOne += runBinaryWith(b, bin, dir, off, "run", "fan.yaml", "@one.json").wall
		onOne += runBinaryWith(b, bin, dir, on, "run", "fan.yaml", "@one.json").wall
	}
	b.ReportMetric(float64(onMap)/float64(offMap), "time-ratio")
	b.ReportMetric(float64(onMap-onOne)/float64(offMap-offOne), "run-ratio")
	b.ReportMetric(float64(offMap.Microseconds())/1000/float64(b.N), "ms-unrecorded")
	b.ReportMetric(float64(onMap.Microseconds())/1000/float64(b.N), "ms-recorded")
}
