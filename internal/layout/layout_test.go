package layout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/arrowagg/arrowagg"

// documented reads the table between the imports markers of ARCHITECTURE.md:
// package → its imports within the module.
func documented(t *testing.T) map[string][]string {
	f, err := os.Open("../../ARCHITECTURE.md")
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "<!-- imports: begin -->":
			in = true
			continue
		case line == "<!-- imports: end -->":
			in = false
		}
		if !in || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| package") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 2, "table row %q", line)
		pkg := strings.TrimSpace(cells[0])
		_, dup := out[pkg]
		require.False(t, dup, "package %s listed twice", pkg)
		imps := strings.Fields(cells[1])
		sort.Strings(imps)
		out[pkg] = imps
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, "no import table in ARCHITECTURE.md")
	return out
}

// actual is the module's import graph: package → its imports within the
// module, non-test files of the default and the cuda build together.
func actual(t *testing.T) map[string][]string {
	out := map[string]map[string]bool{}
	for _, tags := range []string{"", "cuda"} {
		args := []string{"list", "-e", "-json"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		args = append(args, "./...", "./testdata/gen")
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var p struct {
				ImportPath string
				Imports    []string
			}
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else {
				require.NoError(t, err)
			}
			pkg := strings.TrimPrefix(p.ImportPath, module+"/")
			if out[pkg] == nil {
				out[pkg] = map[string]bool{}
			}
			for _, imp := range p.Imports {
				if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
					out[pkg][rest] = true
				}
			}
		}
	}
	res := map[string][]string{}
	for pkg, imps := range out {
		list := []string{}
		for imp := range imps {
			list = append(list, imp)
		}
		sort.Strings(list)
		res[pkg] = list
	}
	return res
}

func TestArchitectureMatchesImports(t *testing.T) {
	doc, got := documented(t), actual(t)
	var diffs []string
	for pkg, imps := range got {
		want, ok := doc[pkg]
		switch {
		case !ok:
			diffs = append(diffs, pkg+": not in the table (imports: "+strings.Join(imps, " ")+")")
		case !slices.Equal(want, imps):
			diffs = append(diffs, pkg+": the table says ["+strings.Join(want, " ")+"], the code imports ["+strings.Join(imps, " ")+"]")
		}
	}
	for pkg := range doc {
		if _, ok := got[pkg]; !ok {
			diffs = append(diffs, pkg+": in the table, but no such package")
		}
	}
	sort.Strings(diffs)
	require.Empty(t, diffs, "ARCHITECTURE.md's import table differs from the code:\n%s", strings.Join(diffs, "\n"))
}

// The layers' rules, stated once more as code: the state and the views are
// at the bottom, backends never reach up to the engine, sources or front
// ends, and sources reach the backends only through the engine.
func TestLayerRules(t *testing.T) {
	got := actual(t)
	forbid := map[string][]string{
		"column":       {"agg", "backend", "backend/cpu", "backend/cuda", "planner", "engine", "dataset", "gpuagg", "report"},
		"agg":          {"backend", "backend/cpu", "backend/cuda", "planner", "engine", "dataset", "gpuagg", "report"},
		"backend":      {"backend/cpu", "backend/cuda", "planner", "engine", "dataset", "gpuagg", "report"},
		"backend/cpu":  {"backend/cuda", "planner", "engine", "dataset", "gpuagg", "report"},
		"backend/cuda": {"engine", "dataset", "gpuagg", "report"},
		"planner":      {"engine", "dataset", "gpuagg", "report", "backend/cuda"},
		"engine":       {"dataset", "gpuagg", "report", "backend/cuda"},
		"dataset":      {"backend", "backend/cpu", "backend/cuda", "report", "gpuagg"},
	}
	for pkg, bad := range forbid {
		for _, imp := range got[pkg] {
			require.NotContains(t, bad, imp, "%s imports %s", pkg, imp)
		}
	}
}

// versionFree are the packages of the engine's core: they work on column
// views and partial states and depend on no Arrow Go version, so that a
// front end for any version can hand them its arrays' memory.
var versionFree = []string{"column", "agg", "filter", "backend", "backend/cpu", "backend/cuda", "planner", "engine/core", "budget",
	"internal/staging", "internal/cudrv", "internal/cudadev", "kernels"}

// TestCoreImportsNoArrow: no package of the core depends, directly or
// through another module, on an Arrow Go module, in either build.
func TestCoreImportsNoArrow(t *testing.T) {
	for _, tags := range []string{"", "cuda"} {
		args := []string{"list", "-e", "-deps", "-f", "{{.ImportPath}}"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		for _, p := range versionFree {
			args = append(args, "./"+p)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		var arrow []string
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/apache/arrow") {
				arrow = append(arrow, dep)
			}
		}
		require.Empty(t, arrow, "tags %q: the core depends on Arrow Go", tags)
	}
}

// TestArrow18IsGenerated: the Arrow Go v18 front end (module arrow18) is
// what scripts/gen-arrow18.sh makes of the v17 one, so that the two are one
// definition: regenerated into a copy of the module, no file differs, and
// no generated file is missing or left over.
func TestArrow18IsGenerated(t *testing.T) {
	tmp := t.TempDir()
	cp := exec.Command("cp", "-r", "../../arrow18", tmp)
	out, err := cp.CombinedOutput()
	require.NoError(t, err, string(out))
	gen := exec.Command("bash", "scripts/gen-arrow18.sh", tmp+"/arrow18")
	gen.Dir = "../.."
	out, err = gen.CombinedOutput()
	require.NoError(t, err, string(out))
	diff := exec.Command("diff", "-r", "../../arrow18", tmp+"/arrow18")
	out, err = diff.CombinedOutput()
	require.NoError(t, err, "arrow18 differs from what scripts/gen-arrow18.sh makes (run it):\n%s", out)
}
