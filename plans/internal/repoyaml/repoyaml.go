// Package repoyaml gathers the repository's YAML files for the tests of
// the readers that must take every one of them (plans and plans/yamlpos).
package repoyaml

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Files is every YAML file under root, the repository's root as the
// calling test's directory reaches it, by path. It fails the test when it
// finds fewer than the repository has had for long, which would mean root
// is not the repository's root.
func Files(tb testing.TB, root string) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			src, err := os.ReadFile(path)
			files[path] = src
			return err
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) < 30 {
		tb.Fatalf("found only %d YAML files under %s", len(files), root)
	}
	return files
}
