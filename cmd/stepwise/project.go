package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/tools"
)

// project is a loaded configuration with its tool catalog, and the
// directory that paths are shown relative to.
type project struct {
	cfg     *config.Config
	catalog *tools.Catalog
	base    string
}

// openProject loads the configuration found from dir (the working directory
// when empty) and builds its catalog. Configuration warnings go to w. Paths
// are shown relative to the working directory.
func openProject(dir string, w io.Writer) (*project, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = wd
	}
	shown := &project{base: wd}
	cfg, diags, err := config.Load(config.Options{Dir: dir})
	// Load's diagnostics are warnings: what fails the load comes back as
	// the error.
	for _, d := range diags {
		d.File = shown.displayPath(d.File)
		if d.Key != "" {
			d.Key = "warning: " + d.Key
		} else {
			d.Message = "warning: " + d.Message
		}
		fmt.Fprintln(w, d.String())
	}
	if err != nil {
		return nil, errors.New(shown.displayText(err.Error()))
	}
	shown.cfg, shown.catalog = cfg, tools.Load(cfg)
	return shown, nil
}

// displayPath shortens an absolute path near the base directory to a
// relative one, the way a user would have typed it; a path far from it (more
// than two levels up) stays absolute, which is then the clearer.
func (p *project) displayPath(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(p.base, path)
	if err != nil || strings.HasPrefix(rel, strings.Repeat(".."+string(filepath.Separator), 3)) {
		return path
	}
	return rel
}

// displayText shortens every absolute path under the base directory in a
// message (the catalog's reasons carry the files they are about), and
// hides the secrets the configuration expanded (config.Redact).
func (p *project) displayText(s string) string {
	return p.cfg.Redact(strings.ReplaceAll(s, p.base+string(filepath.Separator), ""))
}
