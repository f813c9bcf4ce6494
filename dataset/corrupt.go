package dataset

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/arrowagg/arrowagg/budget"
)

// CorruptError is the error of a decoder that failed on an input's bytes
// (arrow-go's, recovered from a panic): the input is corrupt where the
// errors wrapping it say (the file, and the row group, column and page or
// the batch where known). Detail says what the decoder found: its own words
// when it had some (a "parquet: ..." error), else, when it failed with a Go
// runtime error (an index out of range, a slice too long to make), what
// that means of the bytes (an offset or a length outside the data). The
// runtime's own text is no message for a user: Runtime keeps it, for a bug
// report, and Error leaves it out.
type CorruptError struct {
	Detail  string
	Runtime string // the runtime error's text; empty when the panic was no runtime error
}

func (e *CorruptError) Error() string {
	return "corrupt data: its decoder failed on the bytes here (detail: " + e.Detail + ")"
}

// runtimeFaults are what Go's runtime errors say of the bytes a decoder
// read: words of the runtime's text, and their meaning for the data. The
// first whose words the text holds applies.
var runtimeFaults = []struct{ words, meaning string }{
	{"makeslice", "a length or count it declares is negative or too large to allocate"},
	{"makemap", "a length or count it declares is negative or too large to allocate"},
	{"makechan", "a length or count it declares is negative or too large to allocate"},
	{"out of range", "an offset or a length it declares lies outside the data"},
	{"nil pointer", "a part it needs is missing"},
	{"invalid memory address", "a part it needs is missing"},
	{"divide by zero", "a size or count it declares is zero"},
	{"shift amount", "a bit width it declares is negative"},
}

// runtimeWords are the words that mark a text as the runtime's (the error
// of one, quoted by a decoder that recovered it).
var runtimeWords = []string{"runtime error", "makeslice", "makemap", "makechan", "out of range", "nil pointer", "invalid memory address"}

// panicError is the error of a recovered panic: the data being decoded is
// corrupt. A runtime error (or a text quoting one) is told in words of the
// data, its text kept only in the CorruptError's Runtime; any other panic's
// first line is the detail. A refusal of the memory budget is no corruption:
// it is returned as it is; nor is a fault of a mapped file that a decoder
// recovered and returned (arrow-go's Concatenate does): faultError's.
func panicError(p any) error {
	if err, ok := p.(error); ok {
		var be *budget.Error
		if errors.As(err, &be) {
			return err
		}
		var fault interface{ Addr() uintptr }
		if errors.As(err, &fault) {
			return faultError(fault)
		}
	}
	text := fmt.Sprint(p)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	var re runtime.Error
	if err, ok := p.(error); (ok && errors.As(err, &re)) || hasAny(text, runtimeWords) {
		meaning := "its decoder failed a check of its own"
		for _, f := range runtimeFaults {
			if strings.Contains(text, f.words) {
				meaning = f.meaning
				break
			}
		}
		return &CorruptError{Detail: meaning, Runtime: text}
	}
	return &CorruptError{Detail: text}
}

// runtimeFailure is err as a CorruptError when a decoder returned it for a
// panic it recovered, a Go runtime error or a text that quotes one
// (arrow-go's IPC reader wraps them: "arrow/ipc: unknown error while
// reading: runtime error: ..."); else err.
func runtimeFailure(err error) error {
	var re runtime.Error
	if err != nil && (errors.As(err, &re) || hasAny(err.Error(), runtimeWords)) {
		return panicError(err)
	}
	return err
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
