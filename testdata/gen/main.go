package main

import (
	"fmt"
	"os"

	"github.com/arrowagg/arrowagg/internal/testdatagen"
)

func main() {
	dir := "testdata"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := testdatagen.Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
