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
	for _, d := range diags {
		fmt.Fprintln(w, shown.displayText(d.String()))
	}
	if err != nil {
		return nil, errors.New(shown.displayText(err.Error()))
	}
	shown.cfg, shown.catalog = cfg, tools.Load(cfg)
	return shown, nil
}

// displayPath shortens an absolute path under the base directory to a
// relative one, the way a user would have typed it; other paths stay as
// they are.
func (p *project) displayPath(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(p.base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// displayText shortens every absolute path under the base directory in a
// message (the catalog's reasons carry the files they are about).
func (p *project) displayText(s string) string {
	return strings.ReplaceAll(s, p.base+string(filepath.Separator), "")
}
