// Package examples is the demo project stepwise opens when it is started
// without a plan: the checkout team's triage desk, a small project a real
// team could run against its issue tracker.
//
// The project is embedded in the binary. WriteProject writes it out as an
// ordinary project directory (.stepwise/config.toml, plans, tools and the
// scripted model replies, and a README), so that it opens, validates and runs
// like any other. Its model is a script provider that answers from the
// replies file, so the demo needs no API key, and its one MCP server is the
// in-memory issue tracker of ServeTracker, run by the stepwise executable
// itself.
package examples
