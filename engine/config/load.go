package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// Options controls Load.
type Options struct {
	// Dir is where project discovery starts and what relative paths from
	// the environment and from Overrides resolve against. Default: the
	// working directory.
	Dir string
	// LookupEnv reads the environment: ${VAR} references, the STEPWISE_*
	// variables, XDG_CONFIG_HOME, XDG_DATA_HOME and HOME. Default:
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Overrides are the settings given as flags; they win over every file
	// and the environment.
	Overrides Overrides
	// UserOnly leaves every project out, whatever directory Dir is in:
	// the global file, the environment and the overrides only, the
	// settings that are the user's (where the workbench keeps its demo).
	UserOnly bool
}

// Overrides are settings given on the command line. A zero field leaves the
// setting alone. Values are taken as written: no ${VAR} expansion; relative
// paths resolve against Options.Dir.
type Overrides struct {
	DataDir            string
	Storage            Backend
	Log                string
	WorkbenchLog       string
	MaxAgentIterations int
	// Providers adds providers, or replaces those of the same name whole.
	Providers map[string]Provider
	// Models replaces role entries whole, by role name.
	Models map[string]ModelEntry
}

// The environment variables Load reads besides ${VAR} references.
const (
	EnvStorage      = "STEPWISE_STORAGE"       // sqlite or memory; overrides [storage] backend
	EnvLog          = "STEPWISE_LOG"           // becomes Config.Log
	EnvWorkbenchLog = "STEPWISE_WORKBENCH_LOG" // overrides [workbench] log_path
	// EnvAnthropicBaseURL is the base_url of every anthropic provider that
	// sets none, the variable the Anthropic SDKs read for gateways.
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// Graph's names for the same settings, read when stepwise's own variable is
// unset, so that an environment set up for graph (a CI job with
// GRAPH_STORAGE=memory, say) means the same to stepwise.
const (
	EnvGraphStorage      = "GRAPH_STORAGE"       // file (stepwise's sqlite store) or memory
	EnvGraphLog          = "GRAPH_LOG"           // as STEPWISE_LOG
	EnvGraphWorkbenchLog = "GRAPH_WORKBENCH_LOG" // as STEPWISE_WORKBENCH_LOG
)

// source names what set a value that did not come from a file.
const sourceFlags = "command line"

// Load builds the configuration for a command run in opts.Dir. Layers, from
// first to last, with later ones winning:
//
//  1. $XDG_CONFIG_HOME/stepwise/config.toml (XDG_CONFIG_HOME defaults to
//     ~/.config), or graph's $XDG_CONFIG_HOME/graph/config.toml when there
//     is no $XDG_CONFIG_HOME/stepwise directory and there is a graph one;
//  2. the config.toml of the nearest project (see FindProject);
//  3. the environment: STEPWISE_STORAGE, STEPWISE_LOG, STEPWISE_WORKBENCH_LOG,
//     each replaced by graph's GRAPH_* name when unset, and
//     ANTHROPIC_BASE_URL for anthropic providers without a base_url;
//  4. opts.Overrides.
//
// A missing file is no error. Tables merge key by key (a project's
// [mcp.x] command replaces only that key of that server), while a model
// entry (a role or a named model), a price and an array are replaced whole.
// An MCP server's transport is a unit too: a later layer that sets url
// without command turns an earlier stdio server into an HTTP one, and the
// reverse.
//
// ${NAME} in any string value is replaced by the variable's value; NAME is
// letters, digits and underscores, not starting with a digit. Nothing else
// is special: $NAME without braces, a lone $ and $$ are kept as written, and
// there is no escape for a literal ${NAME}. An unset variable in a
// [providers.*] or [mcp.*] value (other than a provider's type) keeps the
// literal text and makes that provider or server unusable, which Provider
// and MCPServer report when asked; anywhere else it fails the load. Only
// values are expanded, never keys.
//
// Relative paths (data_dir, plans and tools paths, log_path, a script
// provider's file) resolve against the project root for the project file and
// against the file's own directory for the global one; a leading ~ is the
// home directory.
//
// Warnings (unknown keys, with a suggestion when one is close) come back
// whether or not the load fails. When it fails, the error is a *LoadError
// holding every error found, each with its file, line, column and key.
func Load(opts Options) (*Config, []Diagnostic, error) {
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	b := newBuilder(env, dir)
	if p, ok := FindProject(dir); ok && !opts.UserOnly {
		b.project = &p
	}

	var sources []source
	var readErrs []Diagnostic
	add := func(file, base string) {
		data, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			readErrs = append(readErrs, Diagnostic{Pos: yamlpos.Pos{File: file}, Message: err.Error()})
		default:
			sources = append(sources, source{file: file, base: base, data: data})
		}
	}
	if b.globalDir != "" {
		add(filepath.Join(b.globalDir, "config.toml"), b.globalDir)
	}
	if b.project != nil {
		add(b.project.ConfigFile(), b.project.Root)
	}
	if len(readErrs) > 0 {
		return nil, nil, &LoadError{Diagnostics: readErrs}
	}
	return b.build(sources, opts.Overrides)
}

// GlobalConfigFile returns the path of the global configuration file,
// $XDG_CONFIG_HOME/stepwise/config.toml (or graph's, see Load), or "" when
// neither XDG_CONFIG_HOME nor the home directory is known. lookupEnv nil
// means os.LookupEnv.
func GlobalConfigFile(lookupEnv func(string) (string, bool)) string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	dir := newBuilder(lookupEnv, "").globalDir
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "config.toml")
}

// source is the text of one configuration file and the directory relative
// paths in it resolve against.
type source struct {
	file, base string
	data       []byte
}

// builder carries the state of one load.
type builder struct {
	env       func(string) (string, bool)
	dir       string // the working directory
	home      string
	globalDir string // $XDG_CONFIG_HOME/stepwise, or $XDG_CONFIG_HOME/graph (see globalDir)
	dataHome  string // $XDG_DATA_HOME
	project   *Project

	cfg        *Config
	origin     map[string]position
	unexpanded map[string]bool // paths whose value kept an unset ${VAR}
	logSource  string          // what set Config.Log: $STEPWISE_LOG, $GRAPH_LOG or the command line
	warnings   []Diagnostic
	errs       []Diagnostic
}

func newBuilder(env func(string) (string, bool), dir string) *builder {
	home := homeDir(env)
	b := &builder{env: env, dir: dir, home: home}
	if d := xdgDir(env, "XDG_CONFIG_HOME", home, ".config"); d != "" {
		b.globalDir = globalDir(d)
	}
	b.dataHome = xdgDir(env, "XDG_DATA_HOME", home, filepath.Join(".local", "share"))
	return b
}

// globalDir picks the global layer's directory under the XDG config
// directory: stepwise's own when it exists, else graph's when that exists
// (it has the same layout: config.toml, plans/, tools/), so that a machine
// set up for graph needs nothing more; stepwise's when neither does, since
// that is where one would be made.
func globalDir(xdgConfig string) string {
	own := filepath.Join(xdgConfig, "stepwise")
	if isDir(own) {
		return own
	}
	if graph := filepath.Join(xdgConfig, "graph"); isDir(graph) {
		return graph
	}
	return own
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// homeDir returns $HOME, falling back to what the operating system says.
func homeDir(env func(string) (string, bool)) string {
	if h, ok := env("HOME"); ok && h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// xdgDir returns an XDG base directory: the variable when it holds an
// absolute path (the specification says to ignore a relative one), else
// home/fallback.
func xdgDir(env func(string) (string, bool), name, home, fallback string) string {
	if v, ok := env(name); ok && filepath.IsAbs(v) {
		return v
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, fallback)
}

// build decodes and layers the sources, then applies the environment, the
// overrides and the defaults, and checks the result.
func (b *builder) build(sources []source, ov Overrides) (*Config, []Diagnostic, error) {
	b.cfg = &Config{Project: b.project, unusable: map[string][]*UnusableError{}}
	b.origin = map[string]position{}
	b.unexpanded = map[string]bool{}
	var layers []*layer
	for _, s := range sources {
		l, warnings, errs := decodeLayer(s.file, s.base, s.data)
		b.warnings = append(b.warnings, warnings...)
		b.errs = append(b.errs, errs...)
		if l != nil {
			layers = append(layers, l)
		}
		b.cfg.Files = append(b.cfg.Files, s.file)
	}
	if len(b.errs) == 0 {
		for _, l := range layers {
			mergeLayer(b.cfg, b.origin, l)
		}
		b.expand()
		b.resolvePaths()
		b.applyEnv()
		b.applyOverrides(ov)
		b.applyDefaults()
		b.validate()
		b.applyLogLevel()
		if d := b.diag("storage.backend", false, ""); d.File != "" {
			b.cfg.Storage.BackendFrom = d.File
			if d.Line > 0 {
				b.cfg.Storage.BackendFrom += fmt.Sprintf(":%d:%d", d.Line, d.Col)
			}
		}
	}
	b.sort(b.warnings)
	if len(b.errs) > 0 {
		b.sort(b.errs)
		return nil, b.warnings, &LoadError{Diagnostics: b.errs}
	}
	return b.cfg, b.warnings, nil
}

// sort orders diagnostics by layer, then by position; those that come from
// no file go last.
func (b *builder) sort(ds []Diagnostic) {
	rank := func(file string) int {
		for i, f := range b.cfg.Files {
			if f == file {
				return i
			}
		}
		return len(b.cfg.Files)
	}
	sort.SliceStable(ds, func(i, j int) bool {
		x, y := ds[i], ds[j]
		if rx, ry := rank(x.File), rank(y.File); rx != ry {
			return rx < ry
		}
		if x.Line != y.Line {
			return x.Line < y.Line
		}
		return x.Col < y.Col
	})
}

// diag places a finding about path: at its value, or at its key when onKey
// is set. A path no source set (a default, or a key left out of a table) is
// placed at the key of the nearest table around it that a source did set.
func (b *builder) diag(path string, onKey bool, msg string) Diagnostic {
	d := Diagnostic{Key: path, Message: msg}
	pos, ok := b.origin[path]
	if !ok {
		onKey = true
		for _, a := range ancestors(path) {
			if pos, ok = b.origin[a]; ok {
				break
			}
		}
	}
	if ok {
		d.File = pos.file
		d.Line, d.Col = pos.valLine, pos.valCol
		if onKey {
			d.Line, d.Col = pos.keyLine, pos.keyCol
		}
	}
	return d
}

func (b *builder) errorf(path string, onKey bool, format string, args ...any) {
	b.errs = append(b.errs, b.diag(path, onKey, fmt.Sprintf(format, args...)))
}

func (b *builder) warnf(path string, onKey bool, format string, args ...any) {
	b.warnings = append(b.warnings, b.diag(path, onKey, fmt.Sprintf(format, args...)))
}

// setOrigin records that a source other than a file set path, forgetting
// where anything under it came from.
func (b *builder) setOrigin(path, source string) {
	dropUnder(b.origin, []string{path})
	b.origin[path] = position{file: source, base: b.dir}
}

// expand replaces ${VAR} references in every string value; see Load for the
// rules.
func (b *builder) expand() {
	root := reflect.ValueOf(b.cfg).Elem()
	t := root.Type()
	for i := range t.NumField() {
		key, ok := tomlKey(t.Field(i))
		if !ok {
			continue
		}
		field := root.Field(i)
		if key != "providers" && key != "mcp" {
			b.expandValue(field, key, "")
			continue
		}
		// Each provider and server owns the deferred errors of its values.
		for _, name := range sortedMapKeys(field) {
			owner := joinKey(key, name.String())
			elem := reflect.New(field.Type().Elem()).Elem()
			elem.Set(field.MapIndex(name))
			b.expandValue(elem, owner, owner)
			field.SetMapIndex(name, elem)
		}
	}
}

// expandValue expands the strings in v, which sits at path. owner is the
// provider or server whose use an unset variable defers the error to, or ""
// when an unset variable is an error now.
func (b *builder) expandValue(v reflect.Value, path, owner string) {
	switch v.Kind() {
	case reflect.String:
		b.expandString(v, path, owner)
	case reflect.Pointer:
		if !v.IsNil() {
			b.expandValue(v.Elem(), path, owner)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			key, ok := tomlKey(v.Type().Field(i))
			if !ok {
				continue
			}
			o := owner
			if v.Type() == reflect.TypeFor[Provider]() && key == "type" {
				o = "" // the type is needed to check the file at all
			}
			b.expandValue(v.Field(i), joinKey(path, key), o)
		}
	case reflect.Slice:
		for i := range v.Len() {
			b.expandValue(v.Index(i), indexKey(path, i), owner)
		}
	case reflect.Map:
		for _, k := range sortedMapKeys(v) {
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(v.MapIndex(k))
			b.expandValue(elem, joinKey(path, k.String()), owner)
			v.SetMapIndex(k, elem)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		inner := reflect.New(v.Elem().Type()).Elem()
		inner.Set(v.Elem())
		b.expandValue(inner, path, owner)
		v.Set(inner)
	}
}

func (b *builder) expandString(v reflect.Value, path, owner string) {
	if strings.HasPrefix(path, "providers.") || strings.HasPrefix(path, "mcp.") {
		for _, name := range referencedVars(v.String()) {
			if !slices.Contains(b.cfg.secretVars, name) {
				b.cfg.secretVars = append(b.cfg.secretVars, name)
			}
		}
		b.noteSecrets(v.String())
	}
	out, missing, malformed := expandVars(v.String(), b.env)
	if strings.HasSuffix(path, ".api_key") {
		b.checkSecret(path, owner, v.String(), malformed)
		malformed = nil
	}
	for _, ref := range malformed {
		b.warnf(path, false, "%s is not a variable reference (a name is letters, digits and _, not starting with a digit); it is kept as written", ref)
	}
	if len(missing) == 0 {
		v.SetString(out)
		return
	}
	for _, name := range missing {
		d := b.diag(path, false, fmt.Sprintf("environment variable %s is not set", name))
		if owner == "" {
			b.errs = append(b.errs, d)
			continue
		}
		b.cfg.unusable[owner] = append(b.cfg.unusable[owner], &UnusableError{Diagnostic: d, Var: name})
	}
	b.unexpanded[path] = true
}

// checkSecret looks at an api_key as written. A ${...} in it that is no
// variable reference is most often a key pasted where the variable's name
// belongs: the provider cannot be used, and the message never repeats the
// text, which may be the key. A bare $NAME is a reference missing its
// braces, sent as written unless it is said.
func (b *builder) checkSecret(path, owner, value string, malformed []string) {
	if len(malformed) > 0 {
		d := b.diag(path, false, "holds a ${...} that is not a variable reference (its text is not shown: it may be the key itself); "+
			"write the name of the environment variable that holds the key, as api_key = \"${ANTHROPIC_API_KEY}\"")
		if owner == "" {
			b.errs = append(b.errs, d)
		} else {
			b.cfg.unusable[owner] = append(b.cfg.unusable[owner], &UnusableError{Diagnostic: d})
		}
		b.unexpanded[path] = true
		return
	}
	if name, ok := strings.CutPrefix(value, "$"); ok && isVarName(name) {
		b.warnf(path, false, "%s is sent as written, not read from the environment: write ${%s} to read the variable", value, name)
	}
}

// minSecretLen is the shortest value of a ${VAR} in [providers.*] or
// [mcp.*] that Redact hides: shorter ones (a port, "true") would hide
// common words rather than keys.
const minSecretLen = 8

// noteSecrets records the values the ${VAR} references in s expand to, for
// Config.Redact.
func (b *builder) noteSecrets(s string) {
	for _, name := range referencedVars(s) {
		value, ok := b.env(name)
		if !ok || len(value) < minSecretLen || slices.ContainsFunc(b.cfg.secrets, func(sec secret) bool { return sec.value == value }) {
			continue
		}
		b.cfg.secrets = append(b.cfg.secrets, secret{value: value, ref: "${" + name + "}", forms: secretForms(value)})
	}
	// The longest first: a secret holding another is hidden whole.
	slices.SortStableFunc(b.cfg.secrets, func(a, c secret) int { return len(c.value) - len(a.value) })
}

// secretForms are the forms value takes in text that quotes it (see
// secret.forms), each once, the longest first.
func secretForms(value string) []string {
	jsonBody := func(s string, html bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.Encode(s)
		quoted := strings.TrimSuffix(b.String(), "\n")
		return quoted[1 : len(quoted)-1]
	}
	quoted := strconv.Quote(value)
	forms := []string{value, quoted[1 : len(quoted)-1], url.QueryEscape(value), url.PathEscape(value)}
	for _, html := range []bool{true, false} {
		once := jsonBody(value, html)
		forms = append(forms, once, jsonBody(once, html))
	}
	// The longest first, and equal ones side by side for Compact.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return slices.Compact(forms)
}

// referencedVars are the names of the ${NAME} references in s.
func referencedVars(s string) []string {
	var names []string
	for {
		_, after, found := strings.Cut(s, "${")
		if !found {
			return names
		}
		name, rest, closed := strings.Cut(after, "}")
		if !closed {
			return names
		}
		if isVarName(name) {
			names = append(names, name)
		}
		s = rest
	}
}

// expandVars replaces each ${NAME} in s. It returns the names that are not
// set, whose references are kept as written, and the ${...} texts that are
// not references at all.
func expandVars(s string, env func(string) (string, bool)) (out string, missing, malformed []string) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var buf strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			break // no closing brace: the rest is plain text
		}
		buf.WriteString(s[:i])
		ref := s[i : i+3+end]
		name := ref[2 : len(ref)-1]
		s = s[i+len(ref):]
		switch v, ok := env(name); {
		case !isVarName(name):
			malformed = append(malformed, ref)
			buf.WriteString(ref)
		case ok:
			buf.WriteString(v)
		default:
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			buf.WriteString(ref)
		}
	}
	buf.WriteString(s)
	return buf.String(), missing, malformed
}

func isVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func sortedMapKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

// resolvePaths makes every path value absolute; see Load.
func (b *builder) resolvePaths() {
	c := b.cfg
	b.resolve("settings.data_dir", &c.Settings.DataDir)
	b.resolve("workbench.log_path", &c.Workbench.LogPath)
	for i := range c.Plans.Paths {
		b.resolve(indexKey("plans.paths", i), &c.Plans.Paths[i])
	}
	for i := range c.Tools.Paths {
		b.resolve(indexKey("tools.paths", i), &c.Tools.Paths[i])
	}
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		path := joinKey(joinKey("providers", name), "file")
		if p.File == "" || b.unexpanded[path] {
			continue
		}
		b.resolve(path, &p.File)
		c.Providers[name] = p
	}
}

// resolve makes the path at key absolute against the base of the file that
// set it, or the working directory when no file did.
func (b *builder) resolve(key string, p *string) {
	if *p == "" {
		return
	}
	base := b.dir
	if pos, ok := b.origin[key]; ok && pos.base != "" {
		base = pos.base
	}
	abs, err := b.absPath(*p, base)
	if err != nil {
		b.errorf(key, false, "%v", err)
		return
	}
	*p = abs
}

func (b *builder) absPath(p, base string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		if b.home == "" {
			return "", fmt.Errorf("cannot expand ~ in %q: the home directory is unknown", p)
		}
		p = filepath.Join(b.home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// applyEnv applies the STEPWISE_* environment variables, each replaced by
// graph's name for it when unset.
func (b *builder) applyEnv() {
	if name, v, ok := b.envEither(EnvStorage, EnvGraphStorage); ok && v != "" {
		// Graph's persistent store is "file"; stepwise's is sqlite.
		names := map[string]Backend{string(BackendSQLite): BackendSQLite, string(BackendMemory): BackendMemory}
		valid := BackendSQLite + ", " + BackendMemory
		if name == EnvGraphStorage {
			names = map[string]Backend{"file": BackendSQLite, string(BackendMemory): BackendMemory}
			valid = "file, " + BackendMemory
		}
		if backend, ok := names[v]; ok {
			b.cfg.Storage.Backend = backend
			b.setOrigin("storage.backend", "$"+name)
		} else {
			b.errs = append(b.errs, Diagnostic{Key: name, Message: fmt.Sprintf("invalid storage backend %q (valid: %s)", v, valid)})
		}
	}
	if name, v, ok := b.envEither(EnvLog, EnvGraphLog); ok {
		b.cfg.Log = v
		b.logSource = "$" + name
	}
	if name, v, ok := b.envEither(EnvWorkbenchLog, EnvGraphWorkbenchLog); ok && v != "" {
		b.setPath("workbench.log_path", "$"+name, v, &b.cfg.Workbench.LogPath)
	}
	if v, ok := b.env(EnvAnthropicBaseURL); ok && v != "" {
		for _, name := range sortedKeys(b.cfg.Providers) {
			p := b.cfg.Providers[name]
			if p.Type != ProviderAnthropic || p.BaseURL != "" {
				continue
			}
			p.BaseURL = v
			b.cfg.Providers[name] = p
			b.setOrigin(joinKey(joinKey("providers", name), "base_url"), "$"+EnvAnthropicBaseURL)
		}
	}
}

// envEither reads stepwise's variable own, or graph's variable graph when
// own is unset, and says which one it read.
func (b *builder) envEither(own, graph string) (name, value string, ok bool) {
	if v, ok := b.env(own); ok {
		return own, v, true
	}
	v, ok := b.env(graph)
	return graph, v, ok
}

// setPath sets a path value from a source other than a file, resolving it
// against the working directory.
func (b *builder) setPath(key, source, value string, dst *string) {
	b.setOrigin(key, source)
	abs, err := b.absPath(value, b.dir)
	if err != nil {
		b.errs = append(b.errs, Diagnostic{Pos: yamlpos.Pos{File: source}, Key: key, Message: err.Error()})
		return
	}
	*dst = abs
}

// applyOverrides applies the flags.
func (b *builder) applyOverrides(ov Overrides) {
	c := b.cfg
	if ov.DataDir != "" {
		b.setPath("settings.data_dir", sourceFlags, ov.DataDir, &c.Settings.DataDir)
	}
	if ov.Storage != "" {
		c.Storage.Backend = ov.Storage
		b.setOrigin("storage.backend", sourceFlags)
	}
	if ov.Log != "" {
		c.Log = ov.Log
		b.logSource = sourceFlags
	}
	if ov.WorkbenchLog != "" {
		b.setPath("workbench.log_path", sourceFlags, ov.WorkbenchLog, &c.Workbench.LogPath)
	}
	if ov.MaxAgentIterations != 0 {
		c.Settings.MaxAgentIterations = ov.MaxAgentIterations
		b.setOrigin("settings.max_agent_iterations", sourceFlags)
	}
	for _, name := range sortedKeys(ov.Providers) {
		p := ov.Providers[name]
		key := joinKey("providers", name)
		b.setOrigin(key, sourceFlags)
		if p.File != "" {
			b.setPath(joinKey(key, "file"), sourceFlags, p.File, &p.File)
		}
		if c.Providers == nil {
			c.Providers = map[string]Provider{}
		}
		c.Providers[name] = p
		delete(c.unusable, key)
	}
	for _, role := range sortedKeys(ov.Models) {
		key := joinKey("models", role)
		if !isRole(role) {
			b.errs = append(b.errs, Diagnostic{Pos: yamlpos.Pos{File: sourceFlags}, Key: key,
				Message: fmt.Sprintf("%q is not a model role (roles: %s)", role, strings.Join(Roles(), ", "))})
			continue
		}
		e := ov.Models[role]
		e.Fallbacks = append([]Fallback(nil), e.Fallbacks...)
		c.Models.setRole(role, &e)
		b.setOrigin(key, sourceFlags)
	}
}

// The defaults of [settings].
const (
	defaultMaxAgentIterations    = 15
	defaultPlanningAttempts      = 2
	defaultLLMTimeoutSeconds     = 600
	defaultLLMIdleTimeoutSeconds = 60
	defaultRetryAfterCapSeconds  = 60
	defaultToolOutputBytes       = 16 << 20
	defaultModelInputBytes       = 1 << 20
	defaultMCPResultBytes        = 16 << 20
	defaultModelReplyBytes       = 4 << 20
	defaultValueBytes            = 64 << 20
)

// setDefault sets a value no layer set: a key that is set keeps its value,
// even a zero, which validation then judges.
func setDefault[T any](b *builder, key string, field *T, value T) {
	if _, set := b.origin[key]; !set {
		*field = value
	}
}

func (b *builder) applyDefaults() {
	c := b.cfg
	if c.Settings.DataDir == "" {
		if b.dataHome == "" {
			b.errs = append(b.errs, Diagnostic{Key: "settings.data_dir",
				Message: "no data directory: set data_dir, XDG_DATA_HOME or HOME"})
		} else {
			c.Settings.DataDir = filepath.Join(b.dataHome, "stepwise")
		}
	}
	setDefault(b, "settings.max_agent_iterations", &c.Settings.MaxAgentIterations, defaultMaxAgentIterations)
	setDefault(b, "settings.planning_attempts", &c.Settings.PlanningAttempts, defaultPlanningAttempts)
	setDefault(b, "settings.llm_timeout_seconds", &c.Settings.LLMTimeoutSeconds, defaultLLMTimeoutSeconds)
	setDefault(b, "settings.llm_idle_timeout_seconds", &c.Settings.LLMIdleTimeoutSeconds, defaultLLMIdleTimeoutSeconds)
	setDefault(b, "settings.retry_after_cap_seconds", &c.Settings.RetryAfterCapSeconds, defaultRetryAfterCapSeconds)
	setDefault(b, "limits.tool_output_bytes", &c.Limits.ToolOutputBytes, defaultToolOutputBytes)
	setDefault(b, "limits.model_input_bytes", &c.Limits.ModelInputBytes, defaultModelInputBytes)
	setDefault(b, "limits.mcp_result_bytes", &c.Limits.MCPResultBytes, defaultMCPResultBytes)
	setDefault(b, "limits.model_reply_bytes", &c.Limits.ModelReplyBytes, defaultModelReplyBytes)
	setDefault(b, "limits.value_bytes", &c.Limits.ValueBytes, defaultValueBytes)
	if c.Storage.Backend == "" {
		c.Storage.Backend = BackendSQLite
	}
	if _, ok := b.origin["plans.paths"]; !ok {
		c.Plans.Paths = b.defaultPaths("plans")
	}
	if _, ok := b.origin["tools.paths"]; !ok {
		c.Tools.Paths = b.defaultPaths("tools")
	}
	if c.Workbench.LogPath == "" && c.Settings.DataDir != "" {
		c.Workbench.LogPath = filepath.Join(c.Settings.DataDir, "workbench.log")
	}
}

// defaultPaths is where plans or tools live when the configuration does not
// say: the project directory first, then the global one.
func (b *builder) defaultPaths(sub string) []string {
	var paths []string
	if b.project != nil {
		paths = append(paths, filepath.Join(b.project.Dir, sub))
	}
	if b.globalDir != "" {
		paths = append(paths, filepath.Join(b.globalDir, sub))
	}
	return paths
}

// applyLogLevel sets Config.LogLevel from the log filter. A filter that
// names no level it knows is a warning, and the level stays debug.
func (b *builder) applyLogLevel() {
	b.cfg.LogLevel = slog.LevelDebug
	if b.cfg.Log == "" {
		return
	}
	level, ok := logLevel(b.cfg.Log)
	if !ok {
		b.warnings = append(b.warnings, Diagnostic{Pos: yamlpos.Pos{File: b.logSource},
			Message: fmt.Sprintf("log filter %q names no level (trace, debug, info, warn, error or off, as LEVEL or TARGET=LEVEL, comma-separated); logging at debug", b.cfg.Log)})
		return
	}
	b.cfg.LogLevel = level
}

// levelOff is a level above every record's: nothing is logged.
const levelOff = slog.LevelError + 100

// logLevel reads a log filter, a level or graph's list of [target=]level
// directives: the most verbose level it names.
func logLevel(filter string) (slog.Level, bool) {
	levels := map[string]slog.Level{"trace": slog.LevelDebug, "debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError, "off": levelOff}
	found, lowest := false, levelOff
	for _, directive := range strings.Split(filter, ",") {
		_, word, _ := strings.Cut(strings.TrimSpace(directive), "=")
		if !strings.Contains(directive, "=") {
			word = strings.TrimSpace(directive)
		}
		level, ok := levels[strings.ToLower(strings.TrimSpace(word))]
		if !ok {
			return 0, false
		}
		found, lowest = true, min(lowest, level)
	}
	return lowest, found
}
