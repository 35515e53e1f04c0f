package supervise

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// children lists the pids of the children of process pid, zombies
// included, from the children file of each of its threads (a child
// belongs to the thread that started it, or took it in as an orphan).
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var pids []int
	for _, task := range tasks {
		list, err := os.ReadFile(dir + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(list)) {
			if child, err := strconv.Atoi(field); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}

// carries reports whether process pid is alive with callVar=value in its
// environment, as it was started. A zombie has no environment left.
func carries(pid int, value string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	entry := callVar + "=" + value + "\x00"
	return bytes.HasPrefix(env, []byte(entry)) || bytes.Contains(env, []byte("\x00"+entry))
}

// dead reports whether process pid has ended: it waits to be reaped, or is
// gone.
func dead(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold anything, even ") ".
	state := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(state) == 0 || state[0] == "Z" || state[0] == "X"
}
