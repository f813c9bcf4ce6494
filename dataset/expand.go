package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Stdin is the path that names standard input (an Arrow IPC stream).
const Stdin = "-"

// Source is one input of a dataset: a file or standard input.
type Source struct {
	Path   string // as given or found; Stdin for standard input
	Format Format
	Size   int64 // bytes; -1 when unknown (standard input)
	// Partitions are the key=value directories of Path, outermost first
	// (Hive partitioning: data/year=2024/month=01/part-0.parquet): each is
	// a column of the dataset whose value is constant in the file.
	Partitions []Partition
	// opener opens the bytes of a source that is not a file of the file
	// system (FromReaderAt, ExpandFS); nil: Path is opened.
	opener opener
}

// Partition is one key=value directory of a source's path; Value is
// unescaped (%2F is /).
type Partition struct {
	Key, Value string
}

// hiveNull is the value Hive writes for a null partition key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partitionsOf returns the key=value directories of path.
func partitionsOf(path string) []Partition {
	var out []Partition
	dirs := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")
	for _, d := range dirs {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			continue
		}
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		out = append(out, Partition{Key: k, Value: v})
	}
	return out
}

// isPartitionDir says whether a directory's name is key=value.
func isPartitionDir(name string) bool {
	k, _, ok := strings.Cut(name, "=")
	return ok && k != ""
}

// Name is how errors and plans name the source.
// (Sources of FromReaderAt and ExpandFS are named as they were given.)
func (s Source) Name() string {
	if s.Path == Stdin {
		return "stdin"
	}
	return s.Path
}

// Error is a problem with one input. Its message is "path: problem".
type Error struct {
	Path string // the input's name ("stdin" for standard input)
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// inputError wraps err as the problem of path, dropping the redundant
// "op path:" of an *fs.PathError and keeping an *Error that already names an
// input.
func inputError(path string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return &Error{Path: path, Err: err}
}

// Expand turns paths into the sources they name, in order, without
// duplicates:
//   - a regular file must be of a supported format;
//   - a directory stands for every regular file directly in it whose bytes
//     are of a supported format, in name order, and those of its key=value
//     subdirectories (Hive partitions), recursively, leaving out names
//     starting with "." or "_" (hidden files, _SUCCESS, _metadata); it is
//     an error when there is none;
//   - a path that does not exist but contains a glob metacharacter is
//     expanded as a glob (** matches any number of directories), each match
//     as above; no match is an error;
//
// A source's key=value directories are its Partitions.
//   - Stdin ("-") is an Arrow IPC stream on standard input, at most once.
//
// Every error is an *Error naming the path.
func Expand(paths []string) ([]Source, error) {
	return expand(paths, nil)
}

// Skipped is an input left out because it could not be read (with
// Options.SkipBad, or by ExpandSkipping).
type Skipped struct {
	Path string // as Source.Name names it
	Err  error  // why
}

// ExpandSkipping is Expand, but a file that cannot be read or is not of a
// supported format (named, or found in a directory or by a glob) is left
// out and listed in skipped instead of ending the expansion. Paths that
// match nothing, directories without data files, and standard input named
// twice are still errors.
func ExpandSkipping(paths []string) (srcs []Source, skipped []Skipped, err error) {
	srcs, err = expand(paths, func(p string, err error) {
		skipped = append(skipped, Skipped{Path: p, Err: err})
	})
	return srcs, skipped, err
}

// expand is Expand; skip, when set, takes the files that cannot be read.
func expand(paths []string, skip func(path string, err error)) ([]Source, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input: name files, directories, globs or - (stdin)")
	}
	var out []Source
	seen := map[string]bool{}
	add := func(s Source) {
		key := s.Path
		if key != Stdin {
			if abs, err := filepath.Abs(s.Path); err == nil {
				key = abs
			}
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, s)
		}
	}
	for _, p := range paths {
		if p == Stdin {
			if seen[Stdin] {
				return nil, &Error{Path: "stdin", Err: errors.New("named more than once")}
			}
			add(Source{Path: Stdin, Format: IPCStream, Size: -1})
			continue
		}
		srcs, err := expandPath(p, skip)
		if err != nil {
			return nil, err
		}
		for _, s := range srcs {
			add(s)
		}
	}
	return out, nil
}

// fileError is what expandPath and expandDir do with the error err of the
// file p: skip it (nil) when skip is set, else return it.
func fileError(p string, err error, skip func(string, error)) error {
	err = inputError(p, err)
	if skip == nil {
		return err
	}
	var e *Error
	errors.As(err, &e)
	skip(p, e.Err)
	return nil
}

func expandPath(p string, skip func(string, error)) ([]Source, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(p, `*?[\{`) {
		matches, gerr := doublestar.FilepathGlob(p)
		if gerr != nil {
			return nil, &Error{Path: p, Err: fmt.Errorf("bad glob pattern: %w", gerr)}
		}
		if len(matches) == 0 {
			return nil, &Error{Path: p, Err: errors.New("no file matches the pattern")}
		}
		var out []Source
		for _, m := range matches {
			s, err := expandPath(m, skip)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	if err != nil {
		return nil, inputError(p, err)
	}
	if fi.IsDir() {
		return expandDir(p, skip)
	}
	s, err := detectPath(p, fi)
	if err != nil {
		return nil, fileError(p, err, skip)
	}
	s.Partitions = partitionsOf(p)
	return []Source{s}, nil
}

func expandDir(dir string, skip func(string, error)) ([]Source, error) {
	skipped := 0
	skipHere := skip
	if skip != nil {
		skipHere = func(p string, err error) { skipped++; skip(p, err) }
	}
	out, err := walkDir(dir, skipHere)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 && skipped == 0 {
		return nil, &Error{Path: dir, Err: errors.New("no Parquet or Arrow IPC files in this directory")}
	}
	return out, nil
}

// walkDir lists the data files of dir and of its key=value subdirectories.
func walkDir(dir string, skip func(string, error)) ([]Source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, inputError(dir, err)
	}
	var out []Source
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p) // follows symbolic links
		if err != nil {
			if err := fileError(p, err, skip); err != nil {
				return nil, err
			}
			continue
		}
		if fi.IsDir() {
			if isPartitionDir(name) {
				sub, err := walkDir(p, skip)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		s, err := detectPath(p, fi)
		switch {
		case errors.Is(err, ErrUnknownFormat) || errors.Is(err, ErrEmpty):
			continue // not a data file
		case err != nil:
			if err := fileError(p, err, skip); err != nil {
				return nil, err
			}
			continue
		}
		s.Partitions = partitionsOf(p)
		out = append(out, s)
	}
	return out, nil
}

// detectPath detects the format of the regular file p.
func detectPath(p string, fi fs.FileInfo) (Source, error) {
	if !fi.Mode().IsRegular() {
		return Source{}, errors.New("not a regular file (read an Arrow IPC stream from a pipe with -)")
	}
	f, err := os.Open(p)
	if err != nil {
		return Source{}, err
	}
	defer f.Close()
	format, err := DetectFile(f, fi.Size())
	if err != nil {
		return Source{}, err
	}
	return Source{Path: p, Format: format, Size: fi.Size()}, nil
}
