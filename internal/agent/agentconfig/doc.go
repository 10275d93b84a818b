// Package agentconfig reads sluice-agent's configuration: YAML files of
// version 2, merged in order, every key checked, and every error naming
// its file, line and column. It also decodes a tunnel given as JSON to the
// local API with the same rules. docs/agent.md documents every key.
//
// It does no network I/O and starts nothing; the agent runs what it
// returns.
package agentconfig
