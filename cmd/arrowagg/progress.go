package main

import (
	"io"
	"strings"
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
	gate *gate // the bar's writer: closed once the bar is stopped
	once sync.Once
}

// gate passes writes to w until it is closed, then drops them: the bar of
// an input of unknown size redraws itself from a goroutine of its own, which
// the library stops only once the bar is finished, so after a failure a
// redraw could land after the command's last message.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
	line   int // the longest line drawn (bytes between carriage returns)
	cur    int
}

func (g *gate) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(b), nil
	}
	for _, c := range b {
		if c == '\r' || c == '\n' {
			g.cur = 0
			continue
		}
		g.cur++
		g.line = max(g.line, g.cur)
	}
	return g.w.Write(b)
}

// close drops every later write; with clear, it first blanks the longest
// line the bar drew.
func (g *gate) close(clear bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if clear && !g.closed && g.line > 0 {
		_, _ = io.WriteString(g.w, "\r"+strings.Repeat(" ", g.line)+"\r")
	}
	g.closed = true
}

// newProgress starts the bar for total input bytes (-1: unknown) when mode
// asks for one: "always", or "auto" with stderr a terminal and more than
// autoProgressBytes of input.
func newProgress(mode string, w io.Writer, terminal bool, total int64) *progress {
	p := &progress{w: w, gate: &gate{w: w}}
	if mode == "always" || mode == "auto" && terminal && total > autoProgressBytes {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.gate),
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
			_ = p.bar.Finish() // cleared on finish
			p.gate.close(false)
			return
		}
		_ = p.bar.Exit()
		p.gate.close(true) // cleared, and no redraw after this
	})
}
