package crlbeam

import (
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestPortable: the pipeline submitted to a standalone job server (Beam's
// Prism command, built from the module cache at the version go.mod pins,
// as a Flink or Spark job server would be used) with --runner universal
// --endpoint 127.0.0.1:PORT --environment_type LOOPBACK gives crlbatch
// score's files.
func TestPortable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts Beam's Prism job server")
	}
	bin := filepath.Join(t.TempDir(), "prism")
	build := exec.Command("go", "build", "-o", bin, "github.com/apache/beam/sdks/v2/go/cmd/prism")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building Prism's job server: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	server := exec.Command(bin, "--job_port", port, "--serve_http=false", "--log_level", "warn")
	server.Stdout, server.Stderr = os.Stderr, os.Stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		server.Process.Kill()
		server.Wait()
	}()
	endpoint := "127.0.0.1:" + port
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", endpoint)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prism's job server is not listening on %s: %v", endpoint, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for name, v := range map[string]string{"runner": "universal", "endpoint": endpoint, "environment_type": "LOOPBACK"} {
		old := flag.Lookup(name).Value.String()
		defer flag.Set(name, old)
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	in := splitSweep(t)
	spec, want := local(t, []string{in, "--protocol", "skyfall"})
	got, st := onBeam(t, spec, Options{})
	same(t, want, got)
	if st.ScoredBytes == 0 {
		t.Errorf("the runs were not scored apart: %+v", st)
	}
}
