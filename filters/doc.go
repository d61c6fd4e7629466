// Package filters compiles an occa-tools config into the decisions the
// runtime makes once per object (device, kernel, memory tag, region name)
// and into the trigger-window table the C runtime runs. Machine is the
// reference implementation of the trigger semantics, which README.md
// states in full.
package filters
