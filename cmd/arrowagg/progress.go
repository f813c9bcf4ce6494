package main

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// autoProgressBytes is the input size from which --progress auto shows a bar
// (on a terminal).
const autoProgressBytes = 64 << 20

// progress is the progress bar on stderr, or nothing.
type progress struct {
	bar  *progressbar.ProgressBar
	w    io.Writer
	once sync.Once
}

// newProgress starts the bar for total input bytes (-1: unknown) when mode
// asks for one: "always", or "auto" with stderr a terminal and more than
// autoProgressBytes of input.
func newProgress(mode string, w io.Writer, terminal bool, total int64) *progress {
	p := &progress{w: w}
	if mode == "always" || mode == "auto" && terminal && total > autoProgressBytes {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("reading"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	return p
}

// add counts n more input bytes done (safe for concurrent use).
func (p *progress) add(n int64) {
	if p.bar != nil {
		_ = p.bar.Add64(n) // only fails writing to stderr
	}
}

// note prints a message on its own line, clearing the bar first.
func (p *progress) note(print func(io.Writer)) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	print(p.w)
}

// stop ends the bar: filled then cleared after success, frozen and cleared
// otherwise. Only the first call does anything.
func (p *progress) stop(ok bool) {
	p.once.Do(func() {
		if p.bar == nil {
			return
		}
		if ok {
			_ = p.bar.Finish()
			return
		}
		_ = p.bar.Exit()
		_ = p.bar.Clear()
	})
}
