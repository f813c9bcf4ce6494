package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	ordinal := flag.Int("ordinal", 0, "the GPU to measure")
	flag.Parse()
	if err := measure(os.Stdout, *ordinal); err != nil {
		fmt.Fprintln(os.Stderr, "arrowagg-startup:", err)
		os.Exit(2)
	}
}
