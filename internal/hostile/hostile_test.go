package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The suite runs the command, built as users build it, on each case under
// an address-space limit, and holds it to what an embedding host needs: an
// answer (the right one) or a refusal, never a crash, a Go panic or a run
// past the time limit.

const (
	// addressSpace is the address space the command may take: a few GiB
	// are the Go runtime's own reservations and the 1 GiB pages of the
	// large-page cases, nowhere near what the bombs would take.
	addressSpace = 6 << 30
	// timeLimit is the longest a case may run.
	timeLimit = 30 * time.Second
)

// The test binary is also the wrapper that limits the command: with
// execEnv set, it lowers its address-space limit to limitEnv bytes and
// executes the command in its place (the limit holds across exec).
const (
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
	os.Exit(m.Run())
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
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*timeLimit)
			defer cancel()
			args := append([]string{"--threads", "8", "--format", "json", "--progress", "never"}, c.Args...)
			cmd := exec.CommandContext(ctx, self, append(args, c.Path)...)
			cmd.Env = append(os.Environ(), execEnv+"="+bin, limitEnv+"="+strconv.Itoa(addressSpace))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			began := time.Now()
			err := cmd.Run()
			took := time.Since(began)
			code := cmd.ProcessState.ExitCode()
			t.Logf("exit %d in %v; stderr: %.300s", code, took.Round(time.Millisecond), stderr.String())
			if took > timeLimit {
				t.Errorf("ran %v, past %v", took, timeLimit)
			}
			for _, bad := range []string{"fatal error", "panic", "goroutine "} {
				if strings.Contains(stderr.String(), bad) || strings.Contains(stdout.String(), bad) {
					t.Errorf("the output has %q", bad)
				}
			}
			if c.Refuse != "" {
				if code != 2 {
					t.Fatalf("exit status %d (%v), want 2 (a refusal)", code, err)
				}
				if stdout.Len() != 0 {
					t.Errorf("output on a refusal: %.200s", stdout.String())
				}
				if !strings.Contains(stderr.String(), c.Refuse) || !strings.Contains(stderr.String(), c.Path) {
					t.Errorf("the refusal names neither %q nor the file: %s", c.Refuse, stderr.String())
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit status %d (%v), want 0", code, err)
			}
			var got result
			dec := json.NewDecoder(&stdout)
			dec.UseNumber()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("the output is not the JSON result: %v", err)
			}
			if got.Rows.String() != strconv.FormatInt(c.Want.Rows, 10) {
				t.Errorf("rows %s, want %d", got.Rows, c.Want.Rows)
			}
			if len(got.Columns) != len(c.Want.Columns) {
				t.Fatalf("%d columns, want %d", len(got.Columns), len(c.Want.Columns))
			}
			for i, w := range c.Want.Columns {
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
		})
	}
}
