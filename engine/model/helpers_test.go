package model

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// noBackoff keeps retry tests fast.
func noBackoff(int) time.Duration { return time.Millisecond }

// writeFile writes text to dir/name, creating directories, and returns the
// file's path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// scriptModels returns Models answering every call from a replies file
// holding text, as stepwise run --script does.
func scriptModels(t *testing.T, text string, opts Options) *Models {
	t.Helper()
	opts.ScriptFile = writeFile(t, t.TempDir(), "replies.yaml", text)
	if opts.Backoff == nil {
		opts.Backoff = noBackoff
	}
	return New(nil, opts)
}

// project writes a project directory with .stepwise/config.toml and the
// given extra files, loads its configuration the way a command would (with
// an environment that reaches no real global configuration), and returns
// it.
func project(t *testing.T, configTOML string, files map[string]string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, ".stepwise/config.toml", configTOML)
	for name, text := range files {
		writeFile(t, dir, name, text)
	}
	env := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"),
		"XDG_DATA_HOME":   filepath.Join(dir, "xdg-data"),
	}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// user is a one-message conversation.
func user(text string) []chat.Message { return []chat.Message{chat.TextMessage("user", text)} }

// call makes a call for step in role and returns the reply's text, or the
// error's text prefixed with "error: ".
func call(m *Models, step, role string) string {
	r, err := m.Call(context.Background(), "", chat.Request{Step: step, Role: role, Messages: user("go")}, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	return r.Text
}

// wantError fails the test unless err's text contains every one of wants.
func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
