package agg_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listed is what `go list -json` says of a package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	// CompiledGoFiles are the files the compiler sees (cgo's output for
	// files that import "C"), with paths in the build cache.
	CompiledGoFiles []string
	Export          string
	Module          *struct{ Path string }
	Standard        bool
}

// TestNoStateFieldWritesOutsideAgg type-checks every package of the module
// (both builds' files: default and cuda tags, non-test files) and fails on
// any assignment to a field of agg.State, or taking a field's address, or a
// State composite literal, outside package agg: a State gets its values only
// through agg's constructors and methods.
func TestNoStateFieldWritesOutsideAgg(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	for _, tags := range []string{"", "cuda"} {
		t.Run("tags="+tags, func(t *testing.T) {
			if tags == "cuda" {
				if _, err := os.Stat("/usr/include/cuda.h"); err != nil && os.Getenv("ARROWAGG_REQUIRE_CUDA") == "" {
					// scripts/ci-cuda.sh runs this check again with the
					// toolkit installed and ARROWAGG_REQUIRE_CUDA set.
					t.Skip("no CUDA toolkit headers (cuda.h) to build the cuda files with")
				}
			}
			checkModule(t, tags)
		})
	}
}

func checkModule(t *testing.T, tags string) {
	args := []string{"list", "-e", "-json", "-export", "-compiled", "-deps"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "github.com/arrowagg/arrowagg/...")
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	exports := map[string]string{}
	var own []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == "github.com/arrowagg/arrowagg" && p.ImportPath != "github.com/arrowagg/arrowagg/agg" {
			own = append(own, p)
		}
	}
	require.NotEmpty(t, own)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var bad []string
	checked := 0
	for _, p := range own {
		var files []*ast.File
		for _, name := range p.CompiledGoFiles {
			if !filepath.IsAbs(name) {
				name = filepath.Join(p.Dir, name)
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			files = append(files, f)
		}
		if len(files) == 0 {
			continue
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		_, err := conf.Check(p.ImportPath, fset, files, info)
		require.NoError(t, err, "type-checking %s", p.ImportPath)
		checked++
		for _, f := range files {
			bad = append(bad, stateWrites(fset, f, info)...)
		}
	}
	require.Greater(t, checked, 5)
	require.Empty(t, bad, "writes to agg.State fields outside package agg:\n%s", strings.Join(bad, "\n"))
}

func isState(t types.Type) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "State" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "github.com/arrowagg/arrowagg/agg"
}

// stateField reports whether e (under index expressions) selects a field of
// an agg.State.
func stateField(e ast.Expr, info *types.Info) bool {
	for {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
			continue
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.SelectorExpr:
			sel := info.Selections[x]
			return sel != nil && sel.Kind() == types.FieldVal && isState(sel.Recv())
		}
		return false
	}
}

func stateWrites(fset *token.FileSet, f *ast.File, info *types.Info) []string {
	var bad []string
	report := func(n ast.Node, what string) {
		bad = append(bad, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				if stateField(l, info) {
					report(l, "assigns a State field")
				}
			}
		case *ast.IncDecStmt:
			if stateField(x.X, info) {
				report(x, "increments a State field")
			}
		case *ast.UnaryExpr:
			if x.Op == token.AND && stateField(x.X, info) {
				report(x, "takes a State field's address")
			}
		case *ast.CompositeLit:
			// State{} is the zero value (an error's result), not a write.
			if tv, ok := info.Types[x]; ok && isState(tv.Type) && len(x.Elts) > 0 {
				report(x, "builds a State literal")
			}
		}
		return true
	})
	return bad
}
