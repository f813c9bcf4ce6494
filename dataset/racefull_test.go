package dataset

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRaceSubsetsRunInFull checks that every test of this package that
// leaves cases out under the race detector (raceSubset, raceSkips) is one
// that the Makefile's test target runs again without it
// (DATASET_FULL_TESTS): otherwise the cases left out would run nowhere.
func TestRaceSubsetsRunInFull(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^DATASET_FULL_TESTS = (.*)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile defines DATASET_FULL_TESTS")
	full, err := regexp.Compile(strings.ReplaceAll(string(m[1]), "$$", "$"))
	require.NoError(t, err)

	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var users []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			uses := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && (id.Name == "raceSubset" || id.Name == "raceSkips") {
					uses = true
				}
				return !uses
			})
			if uses {
				users = append(users, fn.Name.Name)
			}
		}
	}
	sort.Strings(users)
	require.NotEmpty(t, users, "tests that take a subset under the race detector")
	var missing []string
	for _, u := range users {
		if !full.MatchString(u) {
			missing = append(missing, u)
		}
	}
	require.Empty(t, missing, "tests that take raceSubset or raceSkips but are not in the Makefile's DATASET_FULL_TESTS (%s)", m[1])
}
