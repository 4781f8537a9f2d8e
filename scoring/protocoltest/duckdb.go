package protocoltest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeDuckDB returns a Config.DuckDB that reads Parquet with DuckDB under
// Node.js, through the script duckdb.mjs of dir (the integration folder,
// where .ci/install-services installs @duckdb/node-api). When node or the
// module is missing it skips the check, or fails it when require is set
// (CI requires the integration services).
func NodeDuckDB(dir string, require bool) func(t testing.TB, files ...string) map[string]DuckFile {
	return func(t testing.TB, files ...string) map[string]DuckFile {
		t.Helper()
		missing := func(why string) {
			if require {
				t.Fatalf("DuckDB: %s (.ci/install-services installs it)", why)
			}
			t.Skipf("DuckDB: %s (.ci/install-services installs it)", why)
		}
		node, err := exec.LookPath("node")
		if err != nil {
			missing("node is not on PATH")
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
			missing("@duckdb/node-api is not installed in " + dir)
		}
		cmd := exec.Command(node, append([]string{"duckdb.mjs"}, files...)...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("node duckdb.mjs: %v\n%s", err, errb.String())
		}
		var raw map[string]struct {
			Rows    int            `json:"rows"`
			Columns []DuckColumn   `json:"columns"`
			Nulls   map[string]int `json:"nulls"`
		}
		if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
			t.Fatalf("node duckdb.mjs: %v", err)
		}
		res := map[string]DuckFile{}
		for f, r := range raw {
			res[f] = DuckFile{Rows: r.Rows, Columns: r.Columns, Nulls: r.Nulls}
		}
		return res
	}
}
