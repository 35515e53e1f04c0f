package examples

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// project holds the demo project as it is written out: README.md goes to the
// top of the directory, everything else under .stepwise/.
//
//go:embed project
var project embed.FS

// The names WriteProject writes.
const (
	// ProjectDir is the project directory WriteProject creates.
	ProjectDir = ".stepwise"
	// readme is the one file written beside ProjectDir rather than in it.
	readme = "README.md"
	// executablePlaceholder stands, quotes included, for the TOML string of
	// the stepwise executable's path in the embedded config.toml.
	executablePlaceholder = `"@STEPWISE_EXECUTABLE@"`
)

// ErrProjectExists is returned by WriteProject when the directory already
// holds a demo project, or anything else it would overwrite.
var ErrProjectExists = errors.New("a project is already there")

// WriteProject writes the demo project into dir: dir/.stepwise/config.toml,
// its plans, tools and scripted replies, and dir/README.md. executable is the
// stepwise binary that serves the demo's tracker (as its __demo-mcp
// subcommand); a relative path is made absolute. It never overwrites: when
// dir/.stepwise or dir/README.md exists, it writes nothing and returns an
// error wrapping ErrProjectExists. dir itself is created when missing. A path
// holding "${" is refused: config.toml would expand it as a variable.
func WriteProject(dir, executable string) error {
	if executable == "" {
		return errors.New("demo project: the path of the stepwise executable is empty")
	}
	exe, err := filepath.Abs(executable)
	if err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	if strings.Contains(exe, "${") {
		// The configuration loader expands ${NAME} in every value and has
		// no escape for a literal one, so such a path cannot be written.
		return fmt.Errorf("demo project: the executable path %q holds \"${\", which config.toml cannot express", exe)
	}
	for _, name := range []string{ProjectDir, readme} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("demo project: %s: %w", filepath.Join(dir, name), ErrProjectExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("demo project: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	// Mkdir, not MkdirAll: it fails when .stepwise appeared since the check,
	// so that two writers never mix their files.
	root := filepath.Join(dir, ProjectDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("demo project: %s: %w", root, ErrProjectExists)
		}
		return fmt.Errorf("demo project: %w", err)
	}
	if err := writeFiles(dir, root, exe); err != nil {
		os.RemoveAll(root)
		return fmt.Errorf("demo project: %w", err)
	}
	return nil
}

// writeFiles copies the embedded tree out, config.toml with the executable
// filled in. README.md goes last, with O_EXCL, so that a README written by
// someone else in the meantime is never replaced.
func writeFiles(dir, root, exe string) error {
	err := fs.WalkDir(project, "project", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(name, "project"), "/")
		if rel == "" || rel == readme {
			return nil
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.Mkdir(dst, 0o755)
		}
		data, err := project.ReadFile(name)
		if err != nil {
			return err
		}
		if rel == "config.toml" {
			if data, err = fillExecutable(data, exe); err != nil {
				return err
			}
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	data, err := project.ReadFile(path.Join("project", readme))
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, readme), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", filepath.Join(dir, readme), ErrProjectExists)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fillExecutable puts the executable's path into config.toml.
func fillExecutable(config []byte, exe string) ([]byte, error) {
	if !strings.Contains(string(config), executablePlaceholder) {
		return nil, errors.New("config.toml has no place for the executable path")
	}
	return []byte(strings.Replace(string(config), executablePlaceholder, tomlString(exe), 1)), nil
}

// tomlString writes s as a TOML basic string. Go's strconv.Quote will not
// do: TOML has no \x escapes, and a Windows path is full of backslashes.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// KeepProject makes dir the demo project that the workbench opens with no
// argument and keeps from session to session, so that its earlier runs
// can be opened, replayed and forked: it writes the project when dir has
// none, and otherwise leaves it as the user left it, but for the command
// of its [mcp.tracker] server, which it points at exe. The stepwise that
// wrote the project may be gone (`go run` deletes its binary on exit). A
// config whose tracker section names no command (the user pointed it at a
// real tracker some other way) is left alone.
func KeepProject(dir, exe string) error {
	config := filepath.Join(dir, ProjectDir, "config.toml")
	data, err := os.ReadFile(config)
	if errors.Is(err, fs.ErrNotExist) {
		return WriteProject(dir, exe)
	}
	if err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	updated, ok := pointTracker(string(data), exe)
	if !ok || updated == string(data) {
		return nil
	}
	if err := os.WriteFile(config, []byte(updated), 0o644); err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	return nil
}

// pointTracker rewrites the command line of config's [mcp.tracker] table
// to run exe; ok is false when the table has no command line.
func pointTracker(config, exe string) (string, bool) {
	lines := strings.SplitAfter(config, "\n")
	table := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			table = strings.TrimSpace(strings.Trim(trimmed, "[]"))
			continue
		}
		key, _, found := strings.Cut(trimmed, "=")
		if table != "mcp.tracker" || !found || strings.TrimSpace(key) != "command" {
			continue
		}
		end := line[len(strings.TrimRight(line, "\r\n")):]
		lines[i] = "command = " + tomlString(exe) + end
		return strings.Join(lines, ""), true
	}
	return config, false
}
