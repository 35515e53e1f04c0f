package main

import (
	"fmt"
	"io"
	"os"

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
		fmt.Fprintln(w, d.String())
	}
	if err != nil {
		return nil, err
	}
	return &project{cfg: cfg, catalog: tools.Load(cfg)}, nil
}
