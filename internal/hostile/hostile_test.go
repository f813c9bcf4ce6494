package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/arrowagg/arrowagg/budget"
)

// The suite runs the command, built as users build it, on each case under
// an address-space limit, and holds it to what an embedding host needs: an
// answer (the right one) or a refusal, never a crash, a Go panic or a
// runtime error's text, a run past the time limit or a resident set past
// maxRSS; interrupted, it ends soon. It logs a table of what each case took.

const (
	// addressSpace is the address space the command may take: a few GiB
	// are the Go runtime's own reservations and the 1 GiB pages of the
	// large-page cases, nowhere near what the bombs would take. A case with
	// a memory budget of its own (Case.Memory) gets that much more.
	addressSpace = 6 << 30
	// timeLimit is the longest a case may run.
	timeLimit = 30 * time.Second
	// maxRSS is the largest peak resident set a case may take, at
	// --threads 8 and the default memory budget (at most budget.DefaultMax):
	// every input, valid or hostile, is read in bounded memory. A case with
	// a budget of its own may take that budget and rssOverhead.
	maxRSS = 1 << 30
	// rssOverhead is what the command holds besides its budget: the Go
	// runtime, the workers' small buffers, the engine's.
	rssOverhead = maxRSS - budget.DefaultMax
	// cancelBound is the longest the command may run on once interrupted
	// (SIGINT): however large the page or buffer it is decompressing.
	cancelBound = 2 * time.Second
	// busyCPU is the CPU time after which the command of a cancel case is
	// busy on the case's file (past its start, in the large page or buffer).
	busyCPU = 200 * time.Millisecond
	// exitInterrupted is the command's exit status once interrupted.
	exitInterrupted = 130
)

// runtimeTexts are the words of Go's runtime that must never reach the
// user: a crash, a panic and its goroutines, or the text of a runtime error
// that a recovered panic carried ("makeslice: len out of range", "slice
// bounds out of range", a nil pointer dereference).
var runtimeTexts = []string{"fatal error", "panic", "goroutine ", "runtime error",
	"makeslice", "out of range", "nil pointer", "invalid memory address"}

// The test binary is also the wrapper that runs the command. With wrapEnv
// set, it runs itself with execEnv set in its place as its child, forwards
// SIGINT and SIGTERM to it, and reports on file descriptor 3 the child's
// process id ("pid N") once started and its peak resident set ("maxrss N",
// bytes) once ended; it exits with the child's status (128 + the signal's
// number when a signal ended it). With execEnv set, it lowers its
// address-space limit to limitEnv bytes and executes the command in its
// place (the limit holds across exec).
//
// The peak resident set is not the one the test could read of its own
// child: os/exec starts a child with vfork, and the kernel counts the peak
// resident set of the parent's memory, which the child shares until it
// executes, as the child's. The test's (the cases' files are written in
// its memory) is hundreds of MiB; the wrapper's is the floor of what it
// reports, a few MiB.
const (
	wrapEnv  = "ARROWAGG_HOSTILE_WRAP"
	execEnv  = "ARROWAGG_HOSTILE_EXEC"
	limitEnv = "ARROWAGG_HOSTILE_LIMIT_AS"
)

func TestMain(m *testing.M) {
	if bin := os.Getenv(execEnv); bin != "" {
		n, err := strconv.ParseUint(os.Getenv(limitEnv), 10, 64)
		if err == nil {
			err = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
		}
		if err == nil {
			err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
		}
		fmt.Fprintln(os.Stderr, "hostile wrapper:", err)
		os.Exit(3)
	}
	if bin := os.Getenv(wrapEnv); bin != "" {
		os.Exit(wrap(bin, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// wrap runs the command bin with args, limited, as its child (see wrapEnv)
// and returns its exit status.
func wrap(bin string, args []string) int {
	syscall.CloseOnExec(3) // the command's end is not the report's
	report := os.NewFile(3, "report")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "hostile wrapper:", err)
		return 3
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// The child is killed when the thread that started it ends: this
	// goroutine's, locked to it, which ends with the process.
	runtime.LockOSThread()
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), wrapEnv+"=", execEnv+"="+bin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	fmt.Fprintf(report, "pid %d\n", cmd.Process.Pid)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintf(report, "maxrss %d\n", int64(ru.Maxrss)<<10) // KiB on Linux
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// buildCommand builds cmd/arrowagg into dir (without the race detector,
// whatever the test's build: it runs as users run it).
func buildCommand(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "arrowagg")
	cmd := exec.Command(goBin, "build", "-o", bin, "github.com/arrowagg/arrowagg/cmd/arrowagg")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("building the command: %v\n%s", err, out)
	}
	return bin
}

// result is the part of the command's JSON the suite reads.
type result struct {
	Rows    json.Number `json:"rows"`
	Columns []struct {
		Name      string          `json:"name"`
		Count     json.RawMessage `json:"count"`
		NullCount json.RawMessage `json:"null_count"`
		Sum       json.RawMessage `json:"sum"`
		Min       json.RawMessage `json:"min"`
		Max       json.RawMessage `json:"max"`
	} `json:"columns"`
}

// outcome is what one run of the command did.
type outcome struct {
	code           int
	err            error
	took           time.Duration
	rss            int64 // peak resident set, bytes
	stdout, stderr bytes.Buffer
	fed            int64         // bytes written to its standard input
	interrupted    bool          // SIGINT was sent
	cancelTook     time.Duration // from SIGINT to the end
}

// runCase runs the command bin, through the wrapper self, on c.
func runCase(t *testing.T, bin, self string, c Case) *outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeLimit)
	defer cancel()
	input := c.Path
	if c.Stdin {
		input = "-"
	}
	args := append([]string{"--threads", "8", "--format", "json", "--progress", "never"}, c.Args...)
	if c.Memory > 0 {
		args = append(args, "--memory", strconv.FormatInt(c.Memory, 10))
	}
	cmd := exec.CommandContext(ctx, self, append(args, input)...)
	// (GORACE: a wrapper built with the race detector would otherwise
	// sleep a second before it exits 0, and add it to the time.)
	cmd.Env = append(os.Environ(), wrapEnv+"="+bin, limitEnv+"="+strconv.FormatInt(addressSpace+c.Memory, 10),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.WaitDelay = 5 * time.Second
	out := &outcome{rss: -1}
	cmd.Stdout, cmd.Stderr = &out.stdout, &out.stderr
	var fed chan int64
	if c.Stdin {
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		fed = make(chan int64, 1)
		go func() { fed <- feed(stdin, data, c.Endless) }()
	}
	reports, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer reports.Close()
	cmd.ExtraFiles = []*os.File{w}
	began := time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid, rss := make(chan int, 1), make(chan int64, 1)
	go readReports(reports, pid, rss)
	var signalled chan time.Time
	done := make(chan struct{})
	if c.Cancel {
		signalled = make(chan time.Time, 1)
		go func() { signalled <- interruptWhenBusy(cmd.Process, pid, done) }()
	}
	out.err = cmd.Wait()
	ended := time.Now()
	close(done)
	out.took = ended.Sub(began)
	out.code = cmd.ProcessState.ExitCode()
	out.rss = <-rss
	if fed != nil {
		out.fed = <-fed
	}
	if signalled != nil {
		if at := <-signalled; !at.IsZero() {
			out.interrupted, out.cancelTook = true, ended.Sub(at)
		}
	}
	return out
}

// readReports reads the wrapper's reports from r: the command's process id
// goes to pid, its peak resident set to rss (-1 when the wrapper did not
// report one).
func readReports(r io.Reader, pid chan<- int, rss chan<- int64) {
	peak := int64(-1)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var n int64
		if _, err := fmt.Sscanf(sc.Text(), "pid %d", &n); err == nil {
			pid <- int(n)
		} else if _, err := fmt.Sscanf(sc.Text(), "maxrss %d", &n); err == nil {
			peak = n
		}
	}
	rss <- peak
}

// feed writes data to w, then, when endless, zero bytes until a write
// fails (the command ended or closed its input); it closes w and returns
// the bytes written.
func feed(w io.WriteCloser, data []byte, endless bool) int64 {
	defer w.Close()
	n, err := w.Write(data)
	total := int64(n)
	zero := make([]byte, 1<<20)
	for err == nil && endless {
		n, err = w.Write(zero)
		total += int64(n)
	}
	return total
}

// interruptWhenBusy sends SIGINT to the wrapper p (which passes it on) once
// the command, of process id from pid, runs (the wrapper's child has
// executed it) and has taken busyCPU of CPU time, and returns when it did;
// the zero time when the command ended first (done closed, or /proc has no
// such process).
func interruptWhenBusy(p *os.Process, pid <-chan int, done <-chan struct{}) time.Time {
	var id int
	select {
	case <-done:
		return time.Time{}
	case id = <-pid:
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return time.Time{}
		case <-tick.C:
		}
		comm, cpu, err := procCPU(id)
		if err != nil {
			return time.Time{}
		}
		if comm == "arrowagg" && cpu >= busyCPU {
			at := time.Now()
			if p.Signal(os.Interrupt) != nil {
				return time.Time{}
			}
			return at
		}
	}
}

// procCPU reads the command name and the CPU time (user and system) of the
// process pid from /proc.
func procCPU(pid int) (string, time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	// After the name: state (field 3), ..., utime (14), stime (15).
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	const tick = time.Second / 100 // USER_HZ, the unit of /proc's times
	return s[open+1 : closing], time.Duration(utime+stime) * tick, nil
}

func TestHostile(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	cases, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases in %v", len(cases), time.Since(start).Round(time.Millisecond))
	bin := buildCommand(t, dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tsize\texit\twall\tpeak RSS\t(limit)\tcancel\tstderr (first line)")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			out := runCase(t, bin, self, c)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%s\t%s\t%s\t%.120s\n", c.Name, fileSize(c.Path), out.code,
				out.took.Round(time.Millisecond), bytesText(out.rss), bytesText(rssLimit(c)), cancelText(c, out),
				strings.ReplaceAll(firstLine(out.stderr.String()), dir+string(os.PathSeparator), ""))
			check(t, c, out)
		})
	}
	tw.Flush()
	t.Logf("summary (%s, %s, %d CPUs):\n%s", time.Now().UTC().Format(time.DateTime), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), table.String())
}

// check holds the run out of the command on c to the suite's contract.
func check(t *testing.T, c Case, out *outcome) {
	t.Helper()
	stderr, stdout := out.stderr.String(), out.stdout.String()
	t.Logf("exit %d in %v, peak RSS %s; stderr: %.300s", out.code, out.took.Round(time.Millisecond), bytesText(out.rss), stderr)
	if c.Stdin {
		t.Logf("fed %s on stdin", bytesText(out.fed))
	}
	if out.took > timeLimit {
		t.Errorf("ran %v, past %v", out.took, timeLimit)
	}
	if out.rss < 0 {
		t.Errorf("the wrapper reported no peak RSS")
	}
	if limit := rssLimit(c); out.rss > limit {
		t.Errorf("peak RSS %s, past %s", bytesText(out.rss), bytesText(limit))
	}
	for _, bad := range runtimeTexts {
		if strings.Contains(stderr, bad) || strings.Contains(stdout, bad) {
			t.Errorf("the output has %q", bad)
		}
	}
	switch {
	case c.Cancel:
		if !out.interrupted {
			t.Fatalf("the command ended (exit status %d, %v) before it was busy on the file: nothing to interrupt", out.code, out.err)
		}
		t.Logf("interrupted: ended %v after SIGINT", out.cancelTook.Round(time.Millisecond))
		if out.cancelTook > cancelBound {
			t.Errorf("ended %v after SIGINT, past %v", out.cancelTook, cancelBound)
		}
		if out.code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
			t.Errorf("exit status %d (%v), stderr %q: want %d, interrupted", out.code, out.err, stderr, exitInterrupted)
		}
	case c.Refuse != "":
		if out.code != 2 {
			t.Fatalf("exit status %d (%v), want 2 (a refusal)", out.code, out.err)
		}
		if stdout != "" {
			t.Errorf("output on a refusal: %.200s", stdout)
		}
		if !strings.Contains(stderr, c.Refuse) || !strings.Contains(stderr, c.Input()) {
			t.Errorf("the refusal does not name both %q and %s: %s", c.Refuse, c.Input(), stderr)
		}
	default:
		if out.code != 0 {
			t.Fatalf("exit status %d (%v), want 0", out.code, out.err)
		}
		checkAnswer(t, c.Want, &out.stdout)
	}
}

// rssLimit is the largest peak resident set the command may take on c.
func rssLimit(c Case) int64 {
	if c.Memory > 0 {
		return c.Memory + rssOverhead
	}
	return maxRSS
}

// checkAnswer compares the JSON result in stdout with want.
func checkAnswer(t *testing.T, want Answer, stdout io.Reader) {
	t.Helper()
	var got result
	dec := json.NewDecoder(stdout)
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("the output is not the JSON result: %v", err)
	}
	if got.Rows.String() != strconv.FormatInt(want.Rows, 10) {
		t.Errorf("rows %s, want %d", got.Rows, want.Rows)
	}
	if len(got.Columns) != len(want.Columns) {
		t.Fatalf("%d columns, want %d", len(got.Columns), len(want.Columns))
	}
	for i, w := range want.Columns {
		g := got.Columns[i]
		check := func(what string, got json.RawMessage, want string) {
			if want == "" {
				want = "null"
			}
			if string(got) != want {
				t.Errorf("column %d (%.40s): %s %s, want %s", i, w.Name, what, got, want)
			}
		}
		if g.Name != w.Name {
			t.Errorf("column %d: name %.40q, want %.40q", i, g.Name, w.Name)
		}
		check("count", g.Count, strconv.FormatInt(w.Count, 10))
		check("null_count", g.NullCount, strconv.FormatInt(w.NullCount, 10))
		check("sum", g.Sum, w.Sum)
		check("min", g.Min, w.Min)
		check("max", g.Max, w.Max)
		if t.Failed() {
			break
		}
	}
}

// fileSize is the size of the file at path, as text.
func fileSize(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return bytesText(fi.Size())
}

// bytesText is n bytes in B, KiB, MiB or GiB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// cancelText is how long the command of a cancel case took once
// interrupted, for the summary.
func cancelText(c Case, out *outcome) string {
	switch {
	case !c.Cancel:
		return "-"
	case !out.interrupted:
		return "not sent"
	}
	return out.cancelTook.Round(time.Millisecond).String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
