package kernels

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/arrowagg/arrowagg/kernels/internal/policygen"
)

// TestPolicyGoIsCurrent fails when policy.go is not what policy.h generates:
// the header was changed without `go generate ./kernels`, or policy.go was
// edited by hand.
func TestPolicyGoIsCurrent(t *testing.T) {
	header, err := os.ReadFile("policy.h")
	if err != nil {
		t.Fatal(err)
	}
	want, err := policygen.Generate(header, "kernels")
	if err != nil {
		t.Fatalf("policy.h: %v", err)
	}
	got, err := os.ReadFile("policy.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("policy.go is stale: run `go generate ./kernels` (make kernels) and commit it\n"+
			"--- policy.go\n%s\n--- generated from policy.h\n%s", got, want)
	}
}

// TestPolicyValues checks a few generated constants against their meaning,
// so a change of policy.h that breaks what the Go code assumes of it fails
// here, before it reaches a GPU.
func TestPolicyValues(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"AggBlockThreads is a multiple of AggWarpThreads", AggBlockThreads%AggWarpThreads == 0},
		{"AggBlockThreads holds at most AggWarpThreads warps (warp 0 reduces them)",
			AggBlockThreads/AggWarpThreads <= AggWarpThreads},
		{"AggMaxWords holds every state",
			max(AggIntegerWords, AggFloatWords, AggDecimalWords, AggBoolWords) == AggMaxWords},
		{"AggOrderedWords holds the index state and two 128-bit values", AggOrderedWords == AggOrderedIndexWords+4},
		{"AggNoRow is -1 as int64", uint64(AggNoRow) == ^uint64(0)},
		{"LadderBlock is a power of two within [LadderMinBlock, LadderMaxBlock]",
			LadderBlock&(LadderBlock-1) == 0 && LadderMinBlock <= LadderBlock && LadderBlock <= LadderMaxBlock},
	} {
		if !c.ok {
			t.Errorf("policy.h: want %s", c.name)
		}
	}
}

// TestSourcesUsePolicy: every .cu file includes policy.h, and every
// constant of policy.h is used by a kernel source (a .cu file or the device
// code it includes), so the header is the table the
// kernels are compiled from and not a copy beside them.
func TestSourcesUsePolicy(t *testing.T) {
	header, err := os.ReadFile("policy.h")
	if err != nil {
		t.Fatal(err)
	}
	consts, err := policygen.Parse(header)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	// The kernels' sources, and the headers of device code they include
	// (pq.cuh, unsnap.cuh, group.cuh).
	for _, name := range []string{"agg.cu", "ladder.cu", "pq.cuh", "unsnap.cuh", "group.cuh"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sources[name] = string(b)
		if strings.HasSuffix(name, ".cu") && !strings.Contains(sources[name], `#include "policy.h"`) {
			t.Errorf("%s does not include policy.h", name)
		}
	}
	for _, c := range consts {
		used := false
		re := regexp.MustCompile(`\b` + c.Macro + `\b`)
		for _, src := range sources {
			used = used || re.MatchString(src)
		}
		if !used {
			t.Errorf("policy.h: %s is used by no kernel source", c.Macro)
		}
	}
}
