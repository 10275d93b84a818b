// Command sluice-bench measures sluice on this machine, each figure beside
// a raw baseline measured in the same run: ingest and delivery beside raw
// JetStream, the sinks into sluice's AWS emulator, the drain into a Kinesis
// endpoint, one process end to end, one account's attacks on another, and
// the edge beside a direct path. docs/performance.md gives the runs, their
// floors and the figures.
//
// It is a developer's tool, apart from the sluice binary that operators
// run: attack and tunnel spawn sluice serve --dev from the sluice binary
// beside this one, in PATH, or given with --sluice-bin, and make accounts
// through its CLI (sluice accounts create).
package main
