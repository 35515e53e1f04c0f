// Package engine runs plans: it owns the scope templates render against,
// the path of every unit of work, the events that report what happens, the
// stops where a hook may steer, and the usage ledger. Every front end (the
// CLI, the debugger, the workbench) runs plans through it.
package engine
