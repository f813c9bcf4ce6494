// Command genpolicy writes kernels/policy.go, the Go constants of the
// kernels' launch policy, from kernels/policy.h (package policygen). It runs
// from package kernels's directory through go generate:
//
//	go generate ./kernels
//
// Flags -in and -out name other files; -pkg the package of the output.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/arrowagg/arrowagg/kernels/internal/policygen"
)

func main() {
	in := flag.String("in", "policy.h", "the header to read")
	out := flag.String("out", "policy.go", "the Go file to write")
	pkg := flag.String("pkg", "kernels", "the package of the Go file")
	flag.Parse()
	if err := run(*in, *out, *pkg); err != nil {
		fmt.Fprintf(os.Stderr, "genpolicy: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out, pkg string) error {
	header, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	src, err := policygen.Generate(header, pkg)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, src, 0o644)
}
