//go:build !cuda

package main

import (
	"bytes"
	"context"
	"testing"
)

func TestNeedsCUDABuild(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--n", "1000"}, &stdout, &stderr)
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if want := "arrowagg-ladder: the ladder needs the cuda build (make ladder, or go build -tags cuda ./cmd/arrowagg-ladder)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}
