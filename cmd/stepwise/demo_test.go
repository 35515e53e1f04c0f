package main

import (
	"path/filepath"
	"testing"
)

// TestWorkbenchArg checks that the command stepwise demo suggests opens
// the project it wrote, even under a name that is also a command's.
func TestWorkbenchArg(t *testing.T) {
	sep := string(filepath.Separator)
	for dir, want := range map[string]string{"demo": "." + sep + "demo", "a" + sep + "demo": "a" + sep + "demo", sep + "tmp" + sep + "d": sep + "tmp" + sep + "d"} {
		if got := workbenchArg(dir); got != want {
			t.Errorf("workbenchArg(%q) = %q, want %q", dir, got, want)
		}
	}
}
