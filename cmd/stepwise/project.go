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

// project is a loaded configuration with its tool catalog.
type project struct {
	cfg     *config.Config
	catalog *tools.Catalog
}

// openProject loads the configuration found from dir (the working directory
// when empty) and builds its catalog. Configuration warnings go to w.
func openProject(dir string, w io.Writer) (*project, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	cfg, diags, err := config.Load(config.Options{Dir: dir})
	for _, d := range diags {
		fmt.Fprintln(w, displayText(d.String()))
	}
	if err != nil {
		return nil, errors.New(displayText(err.Error()))
	}
	return &project{cfg: cfg, catalog: tools.Load(cfg)}, nil
}

// displayPath shortens an absolute path under the working directory to a
// relative one, the way a user would have typed it; other paths stay as
// they are.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// displayText shortens every absolute path under the working directory in a
// message (the catalog's reasons carry the files they are about).
func displayText(s string) string {
	wd, err := os.Getwd()
	if err != nil {
		return s
	}
	return strings.ReplaceAll(s, wd+string(filepath.Separator), "")
}
