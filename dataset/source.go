package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// A source's bytes are a file of the file system (Source.Path), or, for
// sources made by FromReaderAt and ExpandFS, whatever the program gives: an
// io.ReaderAt (bytes in memory, an object store's reader), the files of an
// fs.FS. Every reader of a source reads it through open.

// opener opens a source's bytes: an io.ReaderAt, and what closes it (nil:
// nothing to close).
type opener func() (io.ReaderAt, io.Closer, error)

// sourceBytes is a source opened: its bytes as a section reader (ReadAt,
// Read and Seek over the whole source), and the file when it is one of the
// file system (nil otherwise: not mapped, not checked for changes).
type sourceBytes struct {
	*io.SectionReader
	file   *os.File
	closer io.Closer
}

// Close closes the source.
func (b *sourceBytes) Close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// open opens the source's bytes, of s.Size bytes.
func (s Source) open() (*sourceBytes, error) {
	if s.opener != nil {
		r, c, err := s.opener()
		if err != nil {
			return nil, err
		}
		return &sourceBytes{SectionReader: io.NewSectionReader(r, 0, s.Size), closer: c}, nil
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, err
	}
	return &sourceBytes{SectionReader: io.NewSectionReader(f, 0, s.Size), file: f, closer: f}, nil
}

// FromReaderAt is a source of the size bytes of r, named name in errors and
// plans: a Parquet file, or an Arrow IPC file or stream, detected from its
// bytes (an error wrapping ErrUnknownFormat otherwise). r is read
// concurrently (as io.ReaderAt allows) until the dataset is closed; nothing
// is copied: Parquet and IPC files are read a page or a buffer at a time.
func FromReaderAt(name string, r io.ReaderAt, size int64) (Source, error) {
	if size < 0 {
		return Source{}, &Error{Path: name, Err: fmt.Errorf("a size of %d bytes", size)}
	}
	format, err := DetectFile(r, size)
	if err != nil {
		return Source{}, inputError(name, err)
	}
	return Source{Path: name, Format: format, Size: size, Partitions: partitionsOf(name),
		opener: func() (io.ReaderAt, io.Closer, error) { return r, nil, nil }}, nil
}

// ExpandFS is Expand over the files of fsys (paths and fs.Glob patterns in
// its slash-separated names; a directory stands for the data files directly
// in it and in its key=value subdirectories). Its files must implement
// io.ReaderAt, as os.DirFS's and embed.FS's do; each is opened when it is
// read and closed after.
func ExpandFS(fsys fs.FS, patterns ...string) ([]Source, error) {
	if len(patterns) == 0 {
		return nil, errors.New("no input: name files, directories or patterns of the file system")
	}
	var out []Source
	seen := map[string]bool{}
	var add func(name string, top bool) error
	add = func(name string, top bool) error {
		fi, err := fs.Stat(fsys, name)
		if err != nil {
			return inputError(name, err)
		}
		if fi.IsDir() {
			entries, err := fs.ReadDir(fsys, name)
			if err != nil {
				return inputError(name, err)
			}
			n := len(out)
			for _, e := range entries {
				base := e.Name()
				if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || e.IsDir() && !isPartitionDir(base) {
					continue
				}
				if err := add(path.Join(name, base), false); err != nil {
					return err
				}
			}
			if top && len(out) == n {
				return &Error{Path: name, Err: errors.New("no Parquet or Arrow IPC files in this directory")}
			}
			return nil
		}
		if !fi.Mode().IsRegular() || seen[name] {
			return nil
		}
		open := func() (io.ReaderAt, io.Closer, error) {
			f, err := fsys.Open(name)
			if err != nil {
				return nil, nil, err
			}
			r, ok := f.(io.ReaderAt)
			if !ok {
				f.Close()
				return nil, nil, fmt.Errorf("the file system's files do not implement io.ReaderAt")
			}
			return r, f, nil
		}
		r, c, err := open()
		if err != nil {
			return inputError(name, err)
		}
		format, err := DetectFile(r, fi.Size())
		c.Close()
		switch {
		case !top && (errors.Is(err, ErrUnknownFormat) || errors.Is(err, ErrEmpty)):
			return nil // not a data file
		case err != nil:
			return inputError(name, err)
		}
		seen[name] = true
		out = append(out, Source{Path: name, Format: format, Size: fi.Size(), Partitions: partitionsOf(name), opener: open})
		return nil
	}
	for _, p := range patterns {
		if _, err := fs.Stat(fsys, p); err != nil && strings.ContainsAny(p, `*?[\`) {
			matches, gerr := fs.Glob(fsys, p)
			if gerr != nil {
				return nil, &Error{Path: p, Err: fmt.Errorf("bad glob pattern: %w", gerr)}
			}
			if len(matches) == 0 {
				return nil, &Error{Path: p, Err: errors.New("no file matches the pattern")}
			}
			sort.Strings(matches)
			for _, m := range matches {
				if err := add(m, true); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}
