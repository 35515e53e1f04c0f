package config

import (
	"os"
	"path/filepath"
)

// ProjectKind says which directory marks a project.
type ProjectKind string

// The project directories stepwise recognises. A .graph directory has the
// same layout as .stepwise (config.toml, plans/, tools/), so projects of the
// tool that introduced it open unchanged.
const (
	KindStepwise ProjectKind = ".stepwise"
	KindGraph    ProjectKind = ".graph"
)

// Project is a directory tree that carries its own configuration, plans and
// tools.
type Project struct {
	// Root is the directory that holds the project directory.
	Root string
	// Dir is the project directory itself, Root/.stepwise or Root/.graph.
	Dir  string
	Kind ProjectKind
}

// ConfigFile returns the path of the project's config.toml.
func (p Project) ConfigFile() string { return filepath.Join(p.Dir, "config.toml") }

// FindProject looks in dir and then in each directory above it for the
// nearest one holding a .stepwise or a .graph directory; when one directory
// holds both, .stepwise wins. It reports false when it reaches the root of
// the file system without finding one.
func FindProject(dir string) (Project, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Project{}, false
	}
	for {
		for _, kind := range []ProjectKind{KindStepwise, KindGraph} {
			p := filepath.Join(dir, string(kind))
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				return Project{Root: dir, Dir: p, Kind: kind}, true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return Project{}, false
		}
		dir = parent
	}
}
