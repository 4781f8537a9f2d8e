package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Test credentials of the servers (SERVICES.md). None of them is a real
// secret, but the tests check that the program never prints them.
const (
	S3Region    = "us-east-1"
	S3AccessKey = "testkey"
	S3SecretKey = "testsecret123"
	// AzuriteAccount and AzuriteKey are Azurite's published development
	// account (Azurite's docs and its constants.js).
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Pinned versions, as installed by .ci/install-services.
const (
	VersitygwVersion     = "v1.8.0"
	FakeGCSServerVersion = "v1.56.1"
	AzuriteVersion       = "3.37.0"
	DuckDBNodeAPIVersion = "1.5.6-r.1"
)

// InstallHint is the message of a skip for want of a server.
const InstallHint = "run .ci/install-services (it installs versitygw " + VersitygwVersion +
	" and fake-gcs-server " + FakeGCSServerVersion + " into $CRLBATCH_TOOLS/bin, default .tools/bin, and azurite " +
	AzuriteVersion + " and @duckdb/node-api " + DuckDBNodeAPIVersion + " into integration/node_modules)"

// RepoRoot is the directory of the crlbatch module's go.mod, found by
// walking up from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/crlbatch/crlbatch\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no crlbatch go.mod above the working directory")
		}
		dir = parent
	}
}

// ToolsDir is $CRLBATCH_TOOLS, or <repo>/.tools.
func ToolsDir(repo string) string {
	if d := os.Getenv("CRLBATCH_TOOLS"); d != "" {
		return d
	}
	return filepath.Join(repo, ".tools")
}

// FindTool looks for an executable in $CRLBATCH_TOOLS/bin,
// integration/node_modules/.bin, then PATH.
func FindTool(repo, name string) (string, error) {
	for _, dir := range []string{filepath.Join(ToolsDir(repo), "bin"), filepath.Join(repo, "integration", "node_modules", ".bin")} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found in %s, integration/node_modules/.bin or PATH: %s", name, filepath.Join(ToolsDir(repo), "bin"), InstallHint)
}

// Server is one running server process.
type Server struct {
	Name string
	Addr string // 127.0.0.1:port
	Dir  string // its data directory
	Log  string // its stdout and stderr

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ServerOptions tune a server's start.
type ServerOptions struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// PublicHost is the host:port clients reach the server by
	// (fake-gcs-server only: it must equal STORAGE_EMULATOR_HOST byte for
	// byte); default the server's own address.
	PublicHost string
}

// StartVersitygw starts versitygw's S3 gateway with the posix backend on
// dir (each bucket is a subdirectory).
func StartVersitygw(ctx context.Context, bin, dir string, o ServerOptions) (*Server, error) {
	return start(ctx, "versitygw", dir, o, func(addr string, _ int) []string {
		return []string{bin, "--port", addr, "--access", S3AccessKey, "--secret", S3SecretKey,
			"--region", S3Region, "--quiet", "posix", dir}
	}, func(addr string) bool {
		// Up when an unauthenticated GET / answers at all (403).
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
}

// StartFakeGCS starts fake-gcs-server with the filesystem backend on dir.
func StartFakeGCS(ctx context.Context, bin, dir string, o ServerOptions) (*Server, error) {
	return start(ctx, "fake-gcs-server", dir, o, func(addr string, port int) []string {
		pub := o.PublicHost
		if pub == "" {
			pub = addr
		}
		return []string{bin, "-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port),
			"-public-host", pub, "-backend", "filesystem", "-filesystem-root", dir, "-log-level", "warn"}
	}, func(addr string) bool {
		resp, err := http.Get("http://" + addr + "/_internal/healthcheck")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// StartAzurite starts Azurite's blob service, in memory.
func StartAzurite(ctx context.Context, bin, dir string, o ServerOptions) (*Server, error) {
	return start(ctx, "azurite-blob", dir, o, func(_ string, port int) []string {
		return []string{bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
			"--inMemoryPersistence", "--disableTelemetry", "--skipApiVersionCheck", "--silent"}
	}, func(addr string) bool {
		resp, err := http.Get("http://" + addr + "/" + AzuriteAccount + "?comp=list")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
}

// start runs a server on a free port (trying three ports, in case another
// process takes the port between the probe and the server's bind) and waits
// until ready says it answers.
func start(ctx context.Context, name, dir string, o ServerOptions, argv func(addr string, port int) []string, ready func(addr string) bool) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var last error
	for try := 0; try < 3; try++ {
		port := o.Port
		if port == 0 {
			p, err := FreePort()
			if err != nil {
				return nil, err
			}
			port = p
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		s := &Server{Name: name, Addr: addr, Dir: dir, Log: filepath.Join(filepath.Dir(dir), fmt.Sprintf("%s-%d.log", name, port)), done: make(chan struct{})}
		logf, err := os.Create(s.Log)
		if err != nil {
			return nil, err
		}
		args := argv(addr, port)
		s.cmd = exec.Command(args[0], args[1:]...)
		s.cmd.Dir = dir
		s.cmd.Stdout, s.cmd.Stderr = logf, logf
		// Its own process group, so Stop reaches node's children too; and a
		// signal if the test binary dies without stopping it.
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := s.cmd.Start(); err != nil {
			logf.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		go func() {
			s.err = s.cmd.Wait()
			logf.Close()
			close(s.done)
		}()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if ready(addr) {
				return s, nil
			}
			select {
			case <-s.done:
				last = fmt.Errorf("%s exited before it was ready (%v): %s", name, s.err, s.LogTail(20))
			case <-ctx.Done():
				s.Stop()
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				s.Stop()
				last = fmt.Errorf("%s not ready on %s after 60 s: %s", name, addr, s.LogTail(20))
			}
			break
		}
		if o.Port != 0 {
			break
		}
	}
	return nil, last
}

// Stop ends the server: SIGTERM to its process group, SIGKILL after 5 s.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	f, err := os.Open(s.Log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
