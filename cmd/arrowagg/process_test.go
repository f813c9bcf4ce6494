package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// runMainEnv makes the test binary run the command instead of the tests:
// the process tests run a copy of it (no Go toolchain needed, as on a GPU
// host that runs the test binary alone).
const runMainEnv = "ARROWAGG_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// command returns the command running arrowagg with args: a copy of this
// test binary, in a directory everyone may read (the unreadable-file test
// runs it as another user).
func command(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "arrowagg-test"); binErr != nil {
			return
		}
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		self, err := os.Executable()
		if err != nil {
			binErr = err
			return
		}
		data, err := os.ReadFile(self)
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, "arrowagg")
		binErr = os.WriteFile(binPath, data, 0o755)
	})
	require.NoError(t, binErr)
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// SIGINT stops a run at once, even one blocked reading standard input:
// exit status 130, no output.
func TestSIGINT(t *testing.T) {
	stream, err := os.ReadFile(filepath.Join(testdata, "sample.arrows"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, t, "--progress", "always", "-f", "json", "-")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderrPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// Part of the stream, then nothing: the command waits for more.
	_, err = stdin.Write(stream[:len(stream)/3])
	require.NoError(t, err)

	// The bar is drawn once the signal handler is in place.
	stderr := bufio.NewReader(stderrPipe)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "reading") {
		b, err := stderr.ReadByte()
		require.NoError(t, err, "stderr so far: %q", seen.String())
		seen.WriteByte(b)
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	rest, err := readAll(stderr)
	require.NoError(t, err)
	err = cmd.Wait()
	require.NoError(t, ctx.Err(), "the command did not stop")
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, exitInterrupted, exit.ExitCode())
	assert.Empty(t, stdout.String())
	// The bar may still clear its (empty) line after the message: "\r   \r".
	out := strings.TrimRight(seen.String()+rest, "\r ")
	assert.True(t, strings.HasSuffix(out, "arrowagg: interrupted\n"), "%q", seen.String()+rest)
}

func readAll(r *bufio.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}

// A file that cannot be read is an input error. Root reads any file, so as
// root the command runs as nobody.
func TestUnreadableFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "arrowagg-unreadable")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	data, err := os.ReadFile(filepath.Join(testdata, "sample.parquet"))
	require.NoError(t, err)
	path := filepath.Join(dir, "secret.parquet")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	require.NoError(t, os.Chmod(path, 0))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, t, path)
	cmd.Dir = "/"
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	assert.Equal(t, exitInput, exit.ExitCode())
	assert.Equal(t, "arrowagg: "+path+": permission denied\n", stderr.String())
	assert.Empty(t, stdout.String())
}
