package aggcompute_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

// TestDocsNameEveryFunction: the package documentation and Register's name
// every function Register adds, and no other.
func TestDocsNameEveryFunction(t *testing.T) {
	reg := compute.NewRegistry()
	require.NoError(t, aggcompute.Register(reg, nil))
	added := reg.GetFunctionNames()

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "aggcompute.go", nil, parser.ParseComments)
	require.NoError(t, err)
	p, err := doc.NewFromFiles(fset, []*ast.File{f}, "github.com/arrowagg/arrowagg/gpuagg/aggcompute")
	require.NoError(t, err)
	var register string
	for _, f := range p.Funcs {
		if f.Name == "Register" {
			register = f.Doc
		}
	}
	require.NotEmpty(t, register)

	// The names of functions in a text: the words that are the names of
	// Arrow C++'s scalar aggregate functions or of arrowagg's. "any" and
	// "all" are English words too: the two texts use them only as the
	// functions' names, so that a list that loses one of them fails here.
	known := regexp.MustCompile(`\b(sum|mean|min|max|min_max|count|count_all|any|all|first|last|first_last|arg_min|arg_max|variance|stddev|quantile|tdigest|product|count_distinct|approximate_median)\b`)
	set := func(text string) []string {
		seen := map[string]bool{}
		var out []string
		for _, m := range known.FindAllString(text, -1) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
		return out
	}
	require.ElementsMatch(t, added, set(register), "Register's doc: %s", register)
	// The package doc's list of the functions names them.
	from, to := strings.Index(p.Doc, "Register adds"), strings.Index(p.Doc, "The argument is")
	require.True(t, from >= 0 && to > from, p.Doc)
	list := p.Doc[from:to]
	require.ElementsMatch(t, added, set(list), "package doc: %s", list)
}
