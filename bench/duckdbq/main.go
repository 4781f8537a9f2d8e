// Command duckdbq is the DuckDB side of bench/compare.sh and bench/scale.sh:
// the query a researcher would write instead of running crlbatch, over the
// same trace files, with DuckDB in this process (duckdb-go, cgo), so that
// its wall time and peak RSS are DuckDB's own and no runtime's around it.
//
//	duckdbq [-threads N] [-auto] FILE...        (.jsonl, or .jsonl.zst)
//
// It runs, on an in-memory database with SET threads=N (default: the
// environment's BENCH_DUCKDB_THREADS, else 2; compare.sh gives crlbatch's
// --concurrency):
//
//	SELECT run_id, regime_id, count(*), avg(reward), var_samp(reward)
//	FROM read_ndjson([FILE, ...], columns={run_id: 'VARCHAR',
//	                 regime_id: 'VARCHAR', reward: 'DOUBLE'})
//	GROUP BY run_id, regime_id
//
// (compression from the file name), reads every result row, and prints one
// JSON line to check the work against the other tools:
//
//	{"engine":"duckdb v1.5.6","schema":"columns","threads":2,"groups":80,"rows":2681900,"reward_sum":"…","query_s":0.93}
//
// The columns clause makes this the bare query: DuckDB parses only the three
// fields. With -auto it is left out, as a researcher typing
// read_ndjson('sweep/*/*.jsonl') would: DuckDB then detects the schema from a
// sample and materialises every field.
//
// reward_sum is Σ count·avg over the groups (10 significant digits, so that
// the order of a parallel sum does not show). query_s is the wall time from
// opening the database to the last result row; the scripts time the whole
// process with /usr/bin/time (wall, CPU, peak RSS).
//
// This is a module of its own (bench/duckdbq/go.mod) so that crlbatch's
// module stays free of cgo; `make bench-duckdbq` builds it into
// bin/duckdbq. Not run in CI.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	threads := 2
	if s := os.Getenv("BENCH_DUCKDB_THREADS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "duckdbq: BENCH_DUCKDB_THREADS=%q: want a whole number of threads, at least 1\n", s)
			os.Exit(2)
		}
		threads = n
	}
	flag.IntVar(&threads, "threads", threads, "DuckDB's `N` threads (SET threads)")
	auto := flag.Bool("auto", false, "leave the columns clause out: DuckDB detects the schema")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: duckdbq [-threads N] [-auto] FILE...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || threads < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), threads, *auto); err != nil {
		fmt.Fprintln(os.Stderr, "duckdbq:", err)
		os.Exit(1)
	}
}

type result struct {
	Engine    string  `json:"engine"`
	Schema    string  `json:"schema"`
	Threads   int     `json:"threads"`
	Groups    int     `json:"groups"`
	Rows      int64   `json:"rows"`
	RewardSum string  `json:"reward_sum"`
	QuerySec  float64 `json:"query_s"`
}

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func run(files []string, threads int, auto bool) error {
	start := time.Now()
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection: the SET and the query run on the same one.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads=%d", threads)); err != nil {
		return err
	}
	lits := make([]string, len(files))
	for i, f := range files {
		lits[i] = literal(f)
	}
	cols := ""
	if !auto {
		cols = `, columns={run_id: 'VARCHAR', regime_id: 'VARCHAR', reward: 'DOUBLE'}`
	}
	q := `SELECT run_id, regime_id, count(*) AS n, avg(reward) AS mean, var_samp(reward) AS var
	      FROM read_ndjson([` + strings.Join(lits, ", ") + `]` + cols + `)
	      GROUP BY run_id, regime_id`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	out := result{Schema: "columns", Threads: threads}
	if auto {
		out.Schema = "auto"
	}
	sum := 0.0
	for rows.Next() {
		var run, regime sql.NullString
		var n int64
		var mean, variance sql.NullFloat64
		if err := rows.Scan(&run, &regime, &n, &mean, &variance); err != nil {
			return err
		}
		out.Groups++
		out.Rows += n
		sum += float64(n) * mean.Float64
		if n > 1 && !(variance.Valid && variance.Float64 >= 0) {
			return fmt.Errorf("bad variance for %s/%s: %v", run.String, regime.String, variance)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	out.QuerySec = time.Since(start).Seconds()
	var version string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		return err
	}
	out.Engine = "duckdb " + version
	out.RewardSum = strconv.FormatFloat(sum, 'g', 10, 64)
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", line)
	return err
}
