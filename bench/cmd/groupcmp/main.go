// Command groupcmp compares two grouped results written as CSV (arrowagg
// --group-by -f csv, groupduck), for scripts/bench-groupby.sh:
//
//	groupcmp [-rel 1e-9] [-max 10] [-names arrowagg,duckdb] A.csv B.csv
//
// The headers must name the same columns (in any order); the columns before
// count_all are the keys. Both files must be sorted by key (ascending,
// numbers as numbers, text byte by byte, nulls last): groups are matched by
// key in one pass, and a group in one file only is a disagreement. Within a
// group, keys must be equal as written, integers exactly (any number of
// digits), other numbers within the relative difference -rel (NaN equals
// NaN, infinities their own sign), and a null (an empty unquoted field) only
// a null; an empty quoted field is the empty string.
//
// It prints "agree: G groups, C columns" and exits 0, or prints the first
// -max disagreements and their number and exits 1; 2 on bad input.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	rel := flag.Float64("rel", 1e-9, "the largest relative difference of two numbers that are not both integers")
	maxShown := flag.Int("max", 10, "disagreements to print")
	names := flag.String("names", "a,b", "what to call the two files in messages")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: groupcmp [-rel 1e-9] [-max 10] [-names a,b] A.csv B.csv")
		os.Exit(2)
	}
	label := strings.SplitN(*names+",", ",", 3)
	files := make([]*os.File, 2)
	for i := range files {
		f, err := os.Open(flag.Arg(i))
		if err != nil {
			fmt.Fprintln(os.Stderr, "groupcmp:", err)
			os.Exit(2)
		}
		defer f.Close()
		files[i] = f
	}
	res, err := compare(files[0], files[1], *rel, label[0], label[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupcmp:", err)
		os.Exit(2)
	}
	if res.total == 0 {
		fmt.Printf("agree: %d groups, %d columns\n", res.groups, res.columns)
		return
	}
	for i, d := range res.diffs {
		if i == *maxShown {
			break
		}
		fmt.Println(d)
	}
	fmt.Printf("disagree: %d differences (%d groups compared)\n", res.total, res.groups)
	os.Exit(1)
}

// field is a CSV field: its text, and whether it was quoted ("" is the
// empty string, an empty unquoted field a null).
type field struct {
	s      string
	quoted bool
}

func (f field) null() bool { return f.s == "" && !f.quoted }

func (f field) String() string {
	if f.null() {
		return "null"
	}
	if f.quoted {
		return strconv.Quote(f.s)
	}
	return f.s
}

// reader reads RFC 4180 records, keeping whether each field was quoted.
type reader struct {
	r    *bufio.Reader
	line int
}

// next returns the next record, io.EOF after the last.
func (rd *reader) next() ([]field, error) {
	rd.line++
	line, err := rd.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull || (err == nil && bytes.IndexByte(line, '"') >= 0) {
		// A long line, or quotes: the general path, a byte at a time.
		return rd.quoted(line)
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.IndexByte(line, '"') >= 0 {
		return rd.quoted(line)
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	s := string(line)
	rec := make([]field, 0, strings.Count(s, ",")+1)
	for {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			return append(rec, field{s: s}), nil
		}
		rec = append(rec, field{s: s[:i]})
		s = s[i+1:]
	}
}

// quoted reads the record that starts with the bytes in head (what
// ReadSlice gave, which the next read overwrites) byte by byte.
func (rd *reader) quoted(head []byte) ([]field, error) {
	pending := append([]byte(nil), head...)
	readByte := func() (byte, error) {
		if len(pending) > 0 {
			c := pending[0]
			pending = pending[1:]
			return c, nil
		}
		return rd.r.ReadByte()
	}
	peek := func() (byte, bool) {
		if len(pending) > 0 {
			return pending[0], true
		}
		p, err := rd.r.Peek(1)
		if err != nil {
			return 0, false
		}
		return p[0], true
	}
	var rec []field
	var cur []byte
	quoted, inQuotes := false, false
	for {
		c, err := readByte()
		if err == io.EOF {
			if inQuotes {
				return nil, fmt.Errorf("line %d: a quoted field without its end", rd.line)
			}
			return append(rec, field{string(cur), quoted}), nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case inQuotes && c == '"':
			if p, ok := peek(); ok && p == '"' {
				readByte()
				cur = append(cur, '"')
			} else {
				inQuotes = false
			}
		case inQuotes:
			if c == '\n' {
				rd.line++
			}
			cur = append(cur, c)
		case c == '"' && len(cur) == 0 && !quoted:
			quoted, inQuotes = true, true
		case c == ',':
			rec = append(rec, field{string(cur), quoted})
			cur = cur[:0]
			quoted = false
		case c == '\r':
		case c == '\n':
			return append(rec, field{string(cur), quoted}), nil
		default:
			cur = append(cur, c)
		}
	}
}

// result is what compare found.
type result struct {
	groups, columns int
	total           int      // disagreements
	diffs           []string // the first of them, described
}

const keepDiffs = 1000

func (r *result) add(format string, args ...any) {
	r.total++
	if len(r.diffs) < keepDiffs {
		r.diffs = append(r.diffs, fmt.Sprintf(format, args...))
	}
}

// compare compares the grouped results a and b (named na and nb).
func compare(a, b io.Reader, rel float64, na, nb string) (*result, error) {
	ra, rb := &reader{r: bufio.NewReaderSize(a, 1<<20)}, &reader{r: bufio.NewReaderSize(b, 1<<20)}
	ha, err := ra.next()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", na, err)
	}
	hb, err := rb.next()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", nb, err)
	}
	names := func(h []field) []string {
		out := make([]string, len(h))
		for i, f := range h {
			out[i] = f.s
		}
		return out
	}
	colsA, colsB := names(ha), names(hb)
	keys := slices.Index(colsA, "count_all")
	if keys < 0 {
		return nil, fmt.Errorf("%s: no count_all column in %v", na, colsA)
	}
	// inB[i]: the column of b named as column i of a.
	inB := make([]int, len(colsA))
	var missing []string
	for i, c := range colsA {
		if inB[i] = slices.Index(colsB, c); inB[i] < 0 {
			missing = append(missing, c+" (only in "+na+")")
		}
	}
	for _, c := range colsB {
		if !slices.Contains(colsA, c) {
			missing = append(missing, c+" (only in "+nb+")")
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the headers differ: %s", strings.Join(missing, ", "))
	}
	if slices.Index(colsB, "count_all") != keys || !slices.Equal(colsA[:keys], colsB[:keys]) {
		return nil, fmt.Errorf("the keys differ: %v in %s, %v in %s", colsA, na, colsB, nb)
	}
	res := &result{columns: len(colsA)}
	read := func(rd *reader, name string, width int) ([]field, error) {
		rec, err := rd.next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(rec) != width {
			return nil, fmt.Errorf("%s: line %d: %d fields, the header has %d", name, rd.line, len(rec), width)
		}
		return rec, nil
	}
	describe := func(rec []field, at func(int) int) string {
		parts := make([]string, keys)
		for i := range keys {
			parts[i] = colsA[i] + "=" + rec[at(i)].String()
		}
		return strings.Join(parts, " ")
	}
	ident := func(i int) int { return i }
	mapB := func(i int) int { return inB[i] }
	var prevA, prevB []field
	recA, err := read(ra, na, len(colsA))
	if err != nil {
		return nil, err
	}
	recB, err := read(rb, nb, len(colsB))
	if err != nil {
		return nil, err
	}
	for recA != nil || recB != nil {
		c := 0
		switch {
		case recA == nil:
			c = 1
		case recB == nil:
			c = -1
		default:
			c = compareKeys(recA, recB, keys, mapB)
		}
		if c < 0 {
			res.add("group %s: only in %s (line %d)", describe(recA, ident), na, ra.line)
		} else if c > 0 {
			res.add("group %s: only in %s (line %d)", describe(recB, mapB), nb, rb.line)
		} else {
			res.groups++
			for i := keys; i < len(colsA); i++ {
				x, y := recA[i], recB[inB[i]]
				if !sameValue(x, y, rel) {
					res.add("group %s: %s: %s %s, %s %s", describe(recA, ident), colsA[i], na, x, nb, y)
				}
			}
		}
		if c <= 0 {
			if prevA != nil && compareKeys(prevA, recA, keys, ident) >= 0 {
				return nil, fmt.Errorf("%s: line %d: group %s not after the one before: not sorted by key", na, ra.line, describe(recA, ident))
			}
			prevA = recA
			if recA, err = read(ra, na, len(colsA)); err != nil {
				return nil, err
			}
		}
		if c >= 0 {
			if prevB != nil && compareKeys(prevB, recB, keys, ident) >= 0 {
				return nil, fmt.Errorf("%s: line %d: group %s not after the one before: not sorted by key", nb, rb.line, describe(recB, mapB))
			}
			prevB = recB
			if recB, err = read(rb, nb, len(colsB)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// compareKeys orders two records by their first keys fields (b's at
// at(i)): numbers as numbers when both read as one, text byte by byte,
// nulls last.
func compareKeys(a, b []field, keys int, at func(int) int) int {
	for i := range keys {
		x, y := a[i], b[at(i)]
		if x == y {
			continue
		}
		switch {
		case x.null() && y.null():
			continue
		case x.null():
			return 1
		case y.null():
			return -1
		}
		if !x.quoted && !y.quoted {
			if p, err := strconv.ParseInt(x.s, 10, 64); err == nil {
				if q, err := strconv.ParseInt(y.s, 10, 64); err == nil {
					if p != q {
						return cmp.Compare(p, q)
					}
					continue
				}
			}
			if p, ok := parseInt(x.s); ok {
				if q, ok := parseInt(y.s); ok {
					if c := p.Cmp(q); c != 0 {
						return c
					}
					continue
				}
			}
			if p, err := strconv.ParseFloat(x.s, 64); err == nil {
				if q, err := strconv.ParseFloat(y.s, 64); err == nil {
					if p != q {
						if p < q {
							return -1
						}
						return 1
					}
					continue
				}
			}
		}
		if c := strings.Compare(x.s, y.s); c != 0 {
			return c
		}
	}
	return 0
}

// parseInt reads an integer of any size.
func parseInt(s string) (*big.Int, bool) {
	if s == "" || strings.ContainsAny(s, ".eEnNiI") {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

// sameValue says whether two aggregate values agree: integers exactly,
// other numbers within rel, anything else as written.
func sameValue(x, y field, rel float64) bool {
	if x.null() || y.null() {
		return x.null() && y.null()
	}
	if x.quoted || y.quoted || x.s == y.s {
		return x == y
	}
	if p, ok := parseInt(x.s); ok {
		if q, ok := parseInt(y.s); ok {
			return p.Cmp(q) == 0
		}
	}
	p, errP := parseFloat(x.s)
	q, errQ := parseFloat(y.s)
	if errP != nil || errQ != nil {
		return x.s == y.s
	}
	switch {
	case math.IsNaN(p) || math.IsNaN(q):
		return math.IsNaN(p) && math.IsNaN(q)
	case math.IsInf(p, 0) || math.IsInf(q, 0):
		return p == q
	}
	return math.Abs(p-q) <= rel*max(math.Abs(p), math.Abs(q))
}

// parseFloat reads a number as arrowagg ("NaN", "Inf", "-Inf") and DuckDB
// ("nan", "inf", "-inf") write them.
func parseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan", "-nan":
		return math.NaN(), nil
	case "inf", "+inf", "infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return f, nil
}
