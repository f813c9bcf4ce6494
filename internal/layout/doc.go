// Package layout holds no code: its test checks that ARCHITECTURE.md's table
// of which package imports which is the module's import graph, in the
// default and the cuda build, so that the documented layers and the code
// cannot drift apart.
package layout
