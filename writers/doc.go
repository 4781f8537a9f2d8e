// Package writers turns results into the files a notebook and a person read:
// Parquet tables, the Markdown report, report.html (HTML: the report's
// Markdown as one self-contained page, figures inline) and manifest.json
// (INTERFACE.md, Outputs).
//
// The contract:
//
//   - Writers take an io.Writer and never close it. The caller (pipeline)
//     commits the object on Close, or aborts it by cancelling its context
//     first, so a reader never sees half a file; manifest.json is written last.
//   - Output is deterministic: the same table and metadata give the same bytes.
//     Parquet files hold no timestamp and name only the crlbatch version in
//     created_by; the manifest's started_at, finished_at, attempt_id and host
//     (and the objects' ETags, which for local files derive from their
//     modification times) are the only values that differ between reruns.
//   - Absent is never zero. A Table builds columns from protocol.Value: an
//     absent metric is a Parquet null, never 0 or NaN, and its reason is
//     written to the row's reasons map (metric column name → reason). A
//     present value must be finite. The report prints an absent value as "--"
//     with a footnote giving its reason.
//   - Every Parquet file is zstd-compressed (level 1, OutputZstdLevel) and
//     carries the key/value metadata crlbatch.version, crlbatch.protocol,
//     crlbatch.params (JSON) and crlbatch.schema_version in the file
//     footer, where DuckDB's parquet_kv_metadata and pyarrow's schema
//     metadata find them; the pipeline adds crlbatch.input and
//     crlbatch.commit (KeyInput, KeyCommit).
//   - Parquet files use only types that pandas, polars, pyarrow and DuckDB read
//     without options: UTF8 strings, INT64, DOUBLE, BOOLEAN, LIST<DOUBLE> and
//     MAP<STRING,STRING>. Column names are snake_case, in declaration order.
//   - A Table refuses mistakes instead of writing nulls: a row that misses a
//     column, sets one twice or holds a bad value is an error.
//   - Text from the data (family names, run keys, labels, task names, object
//     keys, metadata values) enters the report only through Text (table
//     cells, headings, list items) or Code (a code span), which escape what
//     Markdown or HTML would read as syntax, close the bidi overrides a
//     name leaves open, and leave ordinary names byte for byte as they are; Report.Render does so for everything it is given but
//     Bound and Extra, which are Markdown. Notes stay plain sentences (as
//     manifest.json lists them) and are escaped as the report lists them.
//     MarkdownTable keeps every row's cells whatever they hold.
//   - Numbers in the report have four decimals (FormatScaled, FormatValue);
//     from 1e6, and below four decimals' resolution when every number read
//     with them is too, scientific notation; below 2^-52, zero.
//
// The package knows no protocol and imports none: a protocol's adapter
// (scoring/<name>score) declares its tables' columns once with Table and
// appends one row per result, builds its run columns with
// DeclareRunColumns from the job's identity fields, and renders its report
// with Report; FamiliesTable is families.parquet for every protocol. It
// does no I/O of its own beyond the io.Writer it is handed, starts no
// goroutine and reads no clock.
package writers
