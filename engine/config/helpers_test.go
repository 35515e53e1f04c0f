package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sandbox is a home directory, XDG directories and a working directory, all
// under t.TempDir, with the environment pointing at them.
type sandbox struct {
	home, configHome, dataHome, work string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	tmp := t.TempDir()
	s := &sandbox{
		home:       filepath.Join(tmp, "home"),
		configHome: filepath.Join(tmp, "xdg-config"),
		dataHome:   filepath.Join(tmp, "xdg-data"),
		work:       filepath.Join(tmp, "work"),
	}
	for _, d := range []string{s.home, s.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", s.home)
	t.Setenv("XDG_CONFIG_HOME", s.configHome)
	t.Setenv("XDG_DATA_HOME", s.dataHome)
	for _, k := range []string{EnvStorage, EnvLog, EnvWorkbenchLog, EnvGraphStorage, EnvGraphLog, EnvGraphWorkbenchLog, EnvAnthropicBaseURL} {
		unsetenv(t, k)
	}
	return s
}

// unsetenv removes a variable for the duration of the test.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // restores the old value at cleanup
	os.Unsetenv(key)
}

func (s *sandbox) globalFile() string {
	return filepath.Join(s.configHome, "stepwise", "config.toml")
}

func (s *sandbox) projectFile() string {
	return filepath.Join(s.work, ".stepwise", "config.toml")
}

// writeGlobal writes the global config file; "" writes nothing.
func (s *sandbox) writeGlobal(t *testing.T, text string) {
	t.Helper()
	if text != "" {
		writeFile(t, s.globalFile(), text)
	}
}

// writeProject writes the project config file; "" writes nothing, but the
// project directory always exists.
func (s *sandbox) writeProject(t *testing.T, text string) {
	t.Helper()
	mkdir(t, filepath.Join(s.work, ".stepwise"))
	if text != "" {
		writeFile(t, s.projectFile(), text)
	}
}

func (s *sandbox) load(t *testing.T, opts Options) (*Config, []Diagnostic, error) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = s.work
	}
	return Load(opts)
}

// mustLoad loads and fails the test on an error.
func (s *sandbox) mustLoad(t *testing.T, opts Options) (*Config, []Diagnostic) {
	t.Helper()
	cfg, warnings, err := s.load(t, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg, warnings
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// lookupFrom returns an environment of exactly vars.
func lookupFrom(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// withVars returns the process environment plus vars.
func withVars(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}
}

func diagStrings(ds []Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// loadErrors returns the diagnostics of a *LoadError, failing the test for
// any other result.
func loadErrors(t *testing.T, err error) []string {
	t.Helper()
	le, ok := err.(*LoadError)
	if !ok {
		t.Fatalf("error = %v (%T), want *LoadError", err, err)
	}
	return diagStrings(le.Diagnostics)
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func ptr[T any](v T) *T { return &v }
