"""The pandas side of bench/compare.sh: the same per-(run, label) query as
bench/duckdb_query.mjs, the way a notebook would write it.

    /usr/bin/python3 bench/pandas_query.py FILE...   (.jsonl, or .jsonl.zst)

Reads every file with pd.read_json(lines=True) (compression from the file
name; .zst needs python3-zstandard): on one core, and pandas 1.5.3's only
and slowest JSON reader (ujson into Python objects; pandas >= 2 also has
engine="pyarrow", not measured). Concatenates them, groups by (run_id,
regime_id) and computes count, mean and var (sample variance) of reward, then
prints one JSON line to check the work against the other tools:

    {"engine": "pandas 1.5.3", "groups": 8, "rows": 268900, "reward_sum": "..."}

Debian's packages: apt-get install python3-pandas python3-zstandard
"""

import json
import sys


def main(files):
    if not files:
        print("usage: pandas_query.py FILE...", file=sys.stderr)
        return 2
    try:
        import pandas as pd
    except ImportError as e:
        print(f"pandas_query: {e}; install Debian's: apt-get install python3-pandas", file=sys.stderr)
        return 3
    if any(f.endswith(".zst") for f in files):
        try:
            import zstandard  # noqa: F401  (pandas reads .zst through it)
        except ImportError as e:
            print(f"pandas_query: {e}; install Debian's: apt-get install python3-zstandard", file=sys.stderr)
            return 3

    df = pd.concat([pd.read_json(f, lines=True) for f in files], ignore_index=True)
    g = df.groupby(["run_id", "regime_id"])["reward"].agg(["count", "mean", "var"])
    rows = int(g["count"].sum())
    reward_sum = float((g["count"] * g["mean"]).sum())
    print(json.dumps({
        "engine": f"pandas {pd.__version__}",
        "groups": len(g),
        "rows": rows,
        "reward_sum": f"{reward_sum:.10g}",
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
