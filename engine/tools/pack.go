package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/plans"
)

// A tool pack is a named set of builtin__ tools that [tools] packs turns on.
// graph ships the same packs as YAML exec tools over bash, git, jq and gh;
// here they are Go code under the same names, input schemas and output
// shapes, so that graph's plans run unchanged without those programs.

// packTool is one tool of an opt-in pack: its catalog entry, how long one
// call may take (graph's timeout_secs for the tool), and the code that runs
// it. run gets the input with the schema's defaults filled in and already
// validated against the schema.
type packTool struct {
	info    plans.ToolInfo
	timeout time.Duration
	run     func(ctx context.Context, c *packCall) (any, error)
}

// toolPacks maps every name [tools] packs accepts to the tools it adds. llm
// and data add nothing: they are the always-on packs, whose tools
// builtinTools lists for every project.
var toolPacks = map[string]func() []packTool{
	"data":   nil,
	"llm":    nil,
	"github": githubPack,
	"slack":  slackPack,
}

// packNames lists the known pack names, sorted, for messages.
func packNames() []string {
	names := make([]string, 0, len(toolPacks))
	for name := range toolPacks {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// enabledPackTools returns the tools of the named packs by catalog name,
// and an error naming every unknown pack. config.Load already refuses an
// unknown name with its file and line; this is for a Config built some
// other way.
func enabledPackTools(names []string) (map[string]*packTool, error) {
	out := map[string]*packTool{}
	var unknown []string
	for _, name := range names {
		tools, known := toolPacks[name]
		if !known {
			unknown = append(unknown, fmt.Sprintf("%q", name))
			continue
		}
		if tools == nil {
			continue
		}
		for _, t := range tools() {
			out[t.info.Name] = &t
		}
	}
	if len(unknown) > 0 {
		return out, fmt.Errorf("tools.packs: unknown tool pack %s (known: %s)", strings.Join(unknown, ", "), strings.Join(packNames(), ", "))
	}
	return out, nil
}

// UnlistedToolHint says why a tool name the catalog does not list may still
// be meant: a tool of an opt-in pack that is not enabled, and how to enable
// it. It is "" for any other name. Validation (plans.ToolHinter) and the
// runtime say it the same way.
func (c *Catalog) UnlistedToolHint(name string) string {
	pack, ok := packOf(name)
	if !ok {
		return ""
	}
	return fmt.Sprintf("belongs to the %s tool pack, which is not enabled: add \"%s\" to packs under [tools] in config.toml", pack, pack)
}

// packOf names the opt-in pack a builtin__ tool belongs to, whether or not
// it is enabled, so that a call to a disabled one can say what to enable.
func packOf(tool string) (string, bool) {
	for _, name := range packNames() {
		if toolPacks[name] == nil {
			continue
		}
		if slices.ContainsFunc(toolPacks[name](), func(t packTool) bool { return t.info.Name == tool }) {
			return name, true
		}
	}
	return "", false
}

// callPack runs an enabled pack tool: the input's defaults filled in,
// checked against the input schema, then run under the tool's timeout. A
// call the caller gave up on (the step's tool_timeout, an abort) is a plain
// error wrapping the cause, as for exec tools; the tool's own timeout is a
// *ToolError with TimedOut set.
func (r *Runtime) callPack(ctx context.Context, t *packTool, input map[string]any) (any, error) {
	name := t.info.Name
	input = withSchemaDefaults(t.info.InputSchema, input)
	if err := checkInput(name, r.packSchemas[name], input); err != nil {
		return nil, err
	}
	dir, err := r.projectDir()
	if err != nil {
		return nil, &ToolError{Tool: name, Message: err.Error()}
	}
	runCtx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	out, err := t.run(runCtx, &packCall{tool: name, dir: dir, input: input, outputLimit: r.cfg.Limits.ToolOutputBytes})
	switch {
	case err == nil:
		return toResult(name, out)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: stopped: %w", name, context.Cause(ctx))
	case runCtx.Err() != nil:
		return nil, &ToolError{Tool: name, TimedOut: true, ExitCode: -1,
			Message: fmt.Sprintf("%s timed out after %ds", name, int(t.timeout/time.Second))}
	}
	return nil, err
}

// toResult passes a tool's Go value through JSON once, so that its numbers
// are json.Number and its maps map[string]any, as in every other tool
// result.
func toResult(tool string, v any) (any, error) {
	text, err := marshalText(v)
	if err != nil {
		return nil, &ToolError{Tool: tool, Message: "encoding the result: " + err.Error()}
	}
	return parseJSON(text)
}

// marshalText is JSON without HTML escaping: results and hidden comment
// payloads are read back as text, where \u003c in place of < would only
// get in the way.
func marshalText(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// withSchemaDefaults fills in the defaults schema declares for top-level
// properties the input leaves out, in a copy. Pack tools declare defaults
// at the top level only.
func withSchemaDefaults(schema any, input map[string]any) map[string]any {
	root, _ := schema.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	out := make(map[string]any, len(input)+len(props))
	for k, v := range input {
		out[k] = v
	}
	for name, p := range props {
		prop, _ := p.(map[string]any)
		if def, has := prop["default"]; has {
			if _, given := out[name]; !given {
				out[name] = def
			}
		}
	}
	return out
}

// packCall is one call of a pack tool.
type packCall struct {
	tool  string         // the catalog name, e.g. builtin__git_diff
	dir   string         // the project root, where git runs
	input map[string]any // defaults filled in, valid against the schema
	// outputLimit is [limits] tool_output_bytes, the most git may print.
	outputLimit int64
}

// fail is a *ToolError about this call.
func (c *packCall) fail(format string, args ...any) *ToolError {
	return &ToolError{Tool: c.tool, Message: fmt.Sprintf(format, args...)}
}

// str reads a string input; the schema has made sure of its type.
func (c *packCall) str(key string) string {
	s, _ := c.input[key].(string)
	return s
}

// boolean reads a boolean input.
func (c *packCall) boolean(key string) bool {
	b, _ := c.input[key].(bool)
	return b
}

// integer reads an integer input, which arrives as json.Number from plan
// files and from JSON a model wrote, or as a Go number from code; the schema
// has checked it is whole.
func (c *packCall) integer(key string) (int64, error) {
	switch v := c.input[key].(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		if f, err := v.Float64(); err == nil && f == float64(int64(f)) {
			return int64(f), nil
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	}
	return 0, c.fail("input %s: %v is not a whole number", key, c.input[key])
}

// count reads an integer input that is a size or a cap: not negative.
func (c *packCall) count(key string) (int64, error) {
	n, err := c.integer(key)
	if err == nil && n < 0 {
		err = c.fail("input %s must not be negative, got %d", key, n)
	}
	return n, err
}

// number reads a positive integer input, such as a pull request number.
func (c *packCall) number(key string) (int64, error) {
	n, err := c.integer(key)
	if err == nil && n < 1 {
		err = c.fail("input %s must be a positive number, got %d", key, n)
	}
	return n, err
}

// objects reads an array-of-objects input; the schema has checked that
// every item is an object.
func (c *packCall) objects(key string) []map[string]any {
	items, _ := c.input[key].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// schemaObject and friends keep the pack tools' schemas readable.
func schemaObject(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}

func schemaOf(typ, desc string) map[string]any {
	s := map[string]any{"type": typ}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func schemaNullable(typ, desc string) map[string]any {
	s := map[string]any{"type": []any{typ, "null"}}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func withDefault(s map[string]any, def any) map[string]any {
	s["default"] = def
	return s
}

func schemaArray(items any, desc string) map[string]any {
	s := map[string]any{"type": "array"}
	if items != nil {
		s["items"] = items
	}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// packInfo is the catalog entry of a pack tool.
func packInfo(name string, readOnly bool, desc string, input, output map[string]any) plans.ToolInfo {
	ro := readOnly
	info := plans.ToolInfo{Name: "builtin__" + name, Source: "builtin", Description: desc, ReadOnly: &ro, InputSchema: input}
	if output != nil {
		info.OutputSchema = output
	}
	return info
}

// itoa is strconv.FormatInt for the int64s inputs arrive as.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
