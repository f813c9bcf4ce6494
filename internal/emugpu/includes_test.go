//go:build emu

package emugpu

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var includeLine = regexp.MustCompile(`^\s*#\s*include\s+"([^"]+)"`)

// includes adds to seen the files that file includes with #include "...",
// transitively, resolved as the compiler does: from the including file's
// folder.
func includes(t *testing.T, file string, seen map[string]bool) {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := includeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		inc, err := filepath.Abs(filepath.Join(filepath.Dir(file), m[1]))
		require.NoError(t, err)
		if seen[inc] {
			continue
		}
		seen[inc] = true
		includes(t, inc, seen)
	}
	require.NoError(t, sc.Err())
}

// TestIncludesHashed checks that every file outside this folder that the
// C++ files include (the kernels' sources, emu.h) has a symbolic link here
// named *.h: the go command hashes only the files of a package's folder to
// decide whether to rebuild it, so without the link an edit of a kernel
// would leave the tests running the cached, stale object.
func TestIncludesHashed(t *testing.T) {
	here, err := filepath.Abs(".")
	require.NoError(t, err)
	linked := map[string]bool{}
	ents, err := os.ReadDir(".")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, e := range ents {
		switch {
		case e.Type()&os.ModeSymlink != 0 && strings.HasSuffix(e.Name(), ".h"):
			target, err := filepath.EvalSymlinks(e.Name())
			require.NoError(t, err, "link %s", e.Name())
			abs, err := filepath.Abs(target)
			require.NoError(t, err)
			linked[abs] = true
		case strings.HasSuffix(e.Name(), ".cc"):
			includes(t, filepath.Join(here, e.Name()), seen)
		}
	}
	require.NotEmpty(t, seen)
	for inc := range seen {
		if filepath.Dir(inc) == here {
			continue
		}
		require.True(t, linked[inc], "%s is included but has no *.h link in %s: add one (ln -s)", inc, here)
	}
}
