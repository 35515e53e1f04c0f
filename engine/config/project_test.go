package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFindProject(t *testing.T) {
	tests := []struct {
		name     string
		dirs     []string // created under the temporary root
		files    []string // created empty; a file named .stepwise is no project
		start    string
		wantRoot string // "" means no project
		wantKind ProjectKind
	}{
		{
			name:     "stepwise directory in the start directory",
			dirs:     []string{"p/.stepwise"},
			start:    "p",
			wantRoot: "p",
			wantKind: KindStepwise,
		},
		{
			name:     "graph directory is a project too",
			dirs:     []string{"p/.graph"},
			start:    "p",
			wantRoot: "p",
			wantKind: KindGraph,
		},
		{
			name:     "stepwise preferred when both are present",
			dirs:     []string{"p/.graph", "p/.stepwise"},
			start:    "p",
			wantRoot: "p",
			wantKind: KindStepwise,
		},
		{
			name:     "walks up from a nested directory",
			dirs:     []string{"p/.stepwise", "p/a/b/c"},
			start:    "p/a/b/c",
			wantRoot: "p",
			wantKind: KindStepwise,
		},
		{
			name:     "the nearest project wins, whichever kind",
			dirs:     []string{"p/.stepwise", "p/sub/.graph", "p/sub/deep"},
			start:    "p/sub/deep",
			wantRoot: "p/sub",
			wantKind: KindGraph,
		},
		{
			name:     "a file named .stepwise is not a project",
			dirs:     []string{"p/.graph", "p/q"},
			files:    []string{"p/q/.stepwise"},
			start:    "p/q",
			wantRoot: "p",
			wantKind: KindGraph,
		},
		{
			name:  "none",
			dirs:  []string{"p/a"},
			start: "p/a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.dirs {
				mkdir(t, filepath.Join(root, d))
			}
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, ok := FindProject(filepath.Join(root, tt.start))
			if tt.wantRoot == "" {
				if ok {
					t.Fatalf("found %+v, want none", p)
				}
				return
			}
			if !ok {
				t.Fatal("found no project")
			}
			wantRoot := filepath.Join(root, tt.wantRoot)
			want := Project{Root: wantRoot, Dir: filepath.Join(wantRoot, string(tt.wantKind)), Kind: tt.wantKind}
			if p != want {
				t.Errorf("project = %+v, want %+v", p, want)
			}
			if p.ConfigFile() != filepath.Join(want.Dir, "config.toml") {
				t.Errorf("config file = %s", p.ConfigFile())
			}
		})
	}
}

func TestLoadGraphProject(t *testing.T) {
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".graph", "config.toml"), `[providers.local]
type = "openai_compat"
base_url = "http://localhost:11434/v1"
[models]
default = { provider = "local", model = "llama3" }
[storage]
backend = "file"
[plans]
paths = ["./.graph/plans"]
`)
	cfg, warnings := s.mustLoad(t, Options{Dir: filepath.Join(s.work)})
	if cfg.Project == nil || cfg.Project.Kind != KindGraph {
		t.Fatalf("project = %+v, want a .graph project", cfg.Project)
	}
	if want := []string{filepath.Join(s.work, ".graph", "plans")}; len(cfg.Plans.Paths) != 1 || cfg.Plans.Paths[0] != want[0] {
		t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, want)
	}
	if cfg.Storage.Backend != BackendSQLite {
		t.Errorf("backend = %s, want sqlite", cfg.Storage.Backend)
	}
	want := filepath.Join(s.work, ".graph", "config.toml") + `:7:11: storage.backend: stepwise stores runs in sqlite; "file" is read as "sqlite"`
	if got := diagStrings(warnings); len(got) != 1 || got[0] != want {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

// TestGraphGlobalLayer checks which global directory a load uses: stepwise's
// own when it exists, graph's (with its plans and tools) when only that one
// does.
func TestGraphGlobalLayer(t *testing.T) {
	tests := []struct {
		name     string
		stepwise string // the global stepwise config.toml; "-" for no directory at all, "" for an empty one
		graph    string // graph's, likewise
		wantDir  string // "stepwise" or "graph"
		wantIter int
	}{
		{name: "graph's alone is used", stepwise: "-", graph: "[settings]\nmax_agent_iterations = 7\n", wantDir: "graph", wantIter: 7},
		{name: "stepwise's wins when both exist", stepwise: "[settings]\nmax_agent_iterations = 5\n", graph: "[settings]\nmax_agent_iterations = 7\n", wantDir: "stepwise", wantIter: 5},
		{name: "an empty stepwise directory still wins", stepwise: "", graph: "[settings]\nmax_agent_iterations = 7\n", wantDir: "stepwise", wantIter: 15},
		{name: "neither: stepwise's is where one would go", stepwise: "-", graph: "-", wantDir: "stepwise", wantIter: 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			for dir, text := range map[string]string{"stepwise": tt.stepwise, "graph": tt.graph} {
				switch text {
				case "-":
				case "":
					mkdir(t, filepath.Join(s.configHome, dir))
				default:
					writeFile(t, filepath.Join(s.configHome, dir, "config.toml"), text)
				}
			}
			s.writeProject(t, "")
			cfg, _ := s.mustLoad(t, Options{})
			dir := filepath.Join(s.configHome, tt.wantDir)
			if cfg.Settings.MaxAgentIterations != tt.wantIter {
				t.Errorf("max_agent_iterations = %d, want %d", cfg.Settings.MaxAgentIterations, tt.wantIter)
			}
			if want := []string{filepath.Join(s.work, ".stepwise", "plans"), filepath.Join(dir, "plans")}; !slices.Equal(cfg.Plans.Paths, want) {
				t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, want)
			}
			if want := []string{filepath.Join(s.work, ".stepwise", "tools"), filepath.Join(dir, "tools")}; !slices.Equal(cfg.Tools.Paths, want) {
				t.Errorf("tools.paths = %v, want %v", cfg.Tools.Paths, want)
			}
			if got, want := GlobalConfigFile(nil), filepath.Join(dir, "config.toml"); got != want {
				t.Errorf("GlobalConfigFile = %s, want %s", got, want)
			}
		})
	}
}
