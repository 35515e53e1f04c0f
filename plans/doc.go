// Package plans is the plan language of Stepwise: it turns a plan file into an
// immutable, checked program.
//
// Loading keeps the file, line and column of every step and field, so that
// every problem found later (by the static checks here, by the catalog layer,
// or by the engine at run time) can say where it is. A loaded Plan is never
// written to again: the engine keeps a run's scope, results and counters in
// the run, the way text/template keeps execution state apart from its parse
// tree.
//
// Checking happens in two layers. The static layer (Load) needs nothing but
// the file: YAML shape, field names and types, ids, template syntax and
// references, control-step grammar, nesting, schemas and the agent-step
// controls. The catalog layer (Resolve) needs the configured project: it
// resolves tool names and agent tool patterns against a Catalog, which the
// engine fills.
package plans
