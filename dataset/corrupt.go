package dataset

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arrowagg/arrowagg/budget"
)

// CorruptError is the error of a decoder that failed on an input's bytes
// (arrow-go's, recovered from a panic): the input is corrupt where the
// errors wrapping it say (the file, and the row group, column and page or
// the batch where known). Detail is the decoder's own words, for a bug
// report: they come last, never in place of the diagnosis.
type CorruptError struct {
	Detail string
}

func (e *CorruptError) Error() string {
	return "corrupt data: its decoder failed on the bytes here (detail: " + e.Detail + ")"
}

// panicError is the error of a recovered panic: the data being decoded is
// corrupt. The panic's text, often Go's runtime words (an index out of
// range, a slice too long to make), is kept only as the detail.
func panicError(p any) error {
	if err, ok := p.(error); ok {
		var be *budget.Error
		if errors.As(err, &be) { // a refusal of the budget, not corrupt bytes
			return err
		}
	}
	detail := strings.TrimPrefix(fmt.Sprint(p), "runtime error: ")
	if i := strings.IndexByte(detail, '\n'); i >= 0 {
		detail = detail[:i]
	}
	return &CorruptError{Detail: detail}
}
