package main

import (
	"fmt"
	"os"

	"github.com/arrowagg/arrowagg/internal/testdatagen"
)

// Usage: gen [dir]          the files of testdata/ (default dir: testdata)
//
//	gen -tiny dir     the 3-row files of the start-up check (testdatagen.TinyFiles)
func main() {
	dir, files := "testdata", testdatagen.Files
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "-tiny" {
		files, args = testdatagen.TinyFiles, args[1:]
	}
	if len(args) > 0 {
		dir = args[0]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := testdatagen.WriteFiles(dir, files); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
