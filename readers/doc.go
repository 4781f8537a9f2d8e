// Package readers turns the bytes of trace objects into runs, for every
// protocol: format sniffing, line splitting, one validating JSON lexer, and
// one grouping and assembly core that forms runs from rows per PROTOCOLS
// 1.1 and 1.2 (rows grouped by identity into run keys, run metadata, the
// run-count limits, the canonical run order, run-key conflicts). Skyfall
// rows go through a decoder specialised to their shape, into skyfall traces
// (DecodeObject, Assemble, Options); the rows of the other protocols
// through a generic one, into RecordRuns whose Records the protocol reads
// through typed accessors (DecodeRecords, AssembleRecords, RecordOptions).
// Messages name the protocol that Options.Protocol or
// RecordOptions.Protocol gives. The package knows nothing of blob stores,
// contexts or concurrency: the pipeline lists and opens objects and decides
// how many are decoded at once.
//
// # Contract
//
// The pipeline calls DecodeObject once per object, possibly for several
// objects at a time (each call is independent and uses one goroutine), then
// assembles the runs of every decoded object, in bytewise key order: all at
// once with Assemble, or one at a time with AssembleEach and AssembleEachKeep
// (the pipeline's way: a decoded object keeps its rows in compact columns,
// and only the runs being scored are materialised as dense traces). The
// result depends only on the objects' contents and keys and on Options,
// never on the order or concurrency of the DecodeObject calls. The record
// protocols follow the same contract with DecodeRecords and AssembleRecords
// (RecordOptions for Options; a run's rows are Records, shared with the
// decoded objects).
//
//	obj, err := readers.DecodeObject(url, key, r, opts) // one per object, concurrently
//	traces, err := readers.Assemble(objs, opts)         // objs sorted by Key
//	err = readers.AssembleEachKeep(objs, opts, score)   // or one run at a time, as often as needed
//
// A sweep larger than memory: ObjectRuns.Spill moves a decoded object's row
// columns to a temporary file (MemBytes then counts a small header), and
// AssembleEach hands the same runs as Assemble over one at a time, reading
// spilled rows back when their run's turn comes, so that only one run's
// columns are held at once; it consumes spilled objects and removes their
// files. Release drops an object that will not be assembled. See Spilling
// below.
//
// A pass that reads little of each run (a ceiling counting each label's
// rows) need not assemble: PlanRuns plans the same runs in the same order
// without reading a row, failing as AssembleEach fails before its first
// run; ObjectRuns.PartBuilder gives one part's rows, to be read on their own
// (on any goroutine); PlannedRun.CheckLabels gives the --max-labels error
// that assembling a run spanning objects would stop at.
//
// Assembled traces never share memory with the objects. Options.Traces
// lends the assembly functions the row columns of traces the caller is done
// with (a skyfall.TracePool: put a trace back once scored), so that a pass
// over the runs does not allocate one set of columns per run.
//
// An object whose reader has its bytes mapped already (a MappedReader: a
// local file in the page cache, storage.Mapped) is, when plain and within
// MaxObjectBytes, read where it lies, without the copy a read makes: its
// lines are the same, cut at the same '\n's and checked against the same
// limits; the reader is told the bytes consumed every MiB (and at the
// end), and every touch of the bytes runs under its Guard, so that a page
// that faults (the file cut shorter meanwhile) is a read error, not a
// crash. In chunks, each chunk past the first is the mapped bytes
// themselves, uncounted until DecodeChunk decodes them, told consumed as
// it is merged.
//
// One object larger than a core's share: SplitObject reads it as chunks of
// whole lines (Chunks.Next: past the first, each read straight into its
// chunk's buffer, a piece at a time, and cut at its last '\n', its lines
// counted but not copied out of the line buffer one by one; DecodeChunk
// splits them; a decoded chunk's buffer serves a later one, and a plain
// object's fresh buffers are carved four at a time out of a slab advised
// for transparent huge pages, internal/hugemem), DecodeChunk decodes each on its own (on any
// goroutine the caller likes), and Chunks.Merge puts them back together in
// order, into exactly what DecodeObject returns, the same error at the same
// line included, with the bad rows before it handed to OnBadRow in line
// order from the goroutine that merges (one at a time); a chunk numbers its
// lines from its own first, and Merge moves its runs' first lines, its bad
// rows and its error on by the lines merged before. FuzzDecodeChunked holds the two ways to
// the same result. A later chunk's rows of a run are appended to the run's
// builder from the chunk's compact columns (skyfall.Builder.AppendRows), as
// Assemble appends the parts of a run spanning objects that are held in
// memory; parts read back from an encoding or a spill file go row by row.
//
// An object that grew by lines appended to it (a training run's log the
// night after): ResumeObject continues an object decoded from its earlier
// bytes (as the cache keeps it, read back from its encoding) with chunks
// of the lines after them only, merged after its runs, into exactly what
// DecodeObject returns for the whole object (FuzzResumeObject); a run the
// new lines go on with is read back into a builder, the others keep their
// encoding. Only plain objects without skipped bad rows are continued
// (ObjectRuns.Resumable); the caller checks that the earlier bytes are
// still the object's first and end with a line end.
//
// DecodeObject does not close r. To cancel a long decode, cancel the reader
// (the blob reader's context): DecodeObject then returns the reader's error.
//
// Errors. Every problem with the data is a *DataError naming the object URL,
// the 1-based line and, when there is one, the field ("reward",
// "components.progress"): "s3://b/runs/x.jsonl: line 17: reward: got string,
// want number". The pipeline maps it to exit status 1 with errors.As. An
// error of the underlying reader is returned wrapped ("URL: line N: read:
// …", errors.Is finds it) and is never a DataError (exit status 3). Invalid
// Options give a plain error (a usage error, exit status 2). Errors caused
// by a limit also match errors.Is(err, ErrLimit). Nothing is skipped
// unless Options.OnBadRow (RecordOptions.OnBadRow) says so: by default the
// first bad line fails its object.
//
// Skipping bad rows (--max-bad-rows). A bad row is a line that is not a
// valid row: invalid JSON or UTF-8, not an object, a repeated key, NaN or
// an overflowing number, a field of the wrong type, a missing reward or
// regime_id (for the record protocols, whatever RecordOptions.Check
// rejects). With OnBadRow set, each bad row's *DataError goes to it, in
// line order; returning nil skips the line whole (no identity, label,
// origin, metadata candidate or column of it is kept: the row is validated
// completely before anything is applied), returning an error stops the
// decode with that error. ObjectRuns.Skipped counts the skipped lines. The
// errors of an object as a whole are never bad rows and still fail it: a
// corrupt or truncated gzip or zstd stream, a line over MaxLineBytes, an
// object over MaxObjectBytes, the MaxLabels and MaxRuns limits, a failing
// reader. Counting across objects and the limit are the caller's (the
// pipeline's) business:
//
//	opts.OnBadRow = func(row *readers.DataError) error {
//		mu.Lock(); defer mu.Unlock()
//		if skipped = append(skipped, row); len(skipped) > limit {
//			return errTooMany
//		}
//		return nil
//	}
//
// # Objects
//
// The format is found from the first bytes only, never the name: 1f 8b is
// gzip (several members are read in turn), 28 b5 2f fd is zstd (several
// frames likewise; one goroutine; windows up to 256 MiB always, and up to
// 2 GiB, what `zstd --long=31` writes, when Options.MaxObjectBytes is at
// least the window: the decoder holds a buffer of the window's size while
// it reads the object; a frame asking for more is refused, naming its
// window; the decoders, and their buffers, are reused from object to object
// until ReleaseDecoders lets go of the idle ones), anything else is plain
// JSON Lines. A truncated or corrupt stream, and
// trailing bytes after a gzip member, are DataErrors at the line being read.
// Options.MaxObjectBytes (--max-object-bytes, default 64 GiB) caps the
// decompressed bytes of one object, so a decompression bomb fails clearly.
//
// Lines end at '\n'; a '\r' before it is dropped. A UTF-8 byte-order mark
// at the very start of an object is skipped (anywhere else it is invalid
// JSON). A line holding only spaces, tabs and '\r' is blank and skipped
// (it still counts for line numbers). The last line needs no '\n'. There is
// no small line-length limit: a line may be as long as Options.MaxLineBytes
// (--max-line-bytes, default 256 MiB, counted without the line end and
// without a leading byte-order mark). The line buffer grows to the longest
// line up to 4 MiB; a longer line is read on into blocks outside the Go heap
// (where the system has mmap) and copied into a buffer of exactly its
// length, which is dropped once the line is decoded (a chunk takes it over
// instead of copying it). A long line therefore costs about its length,
// once, while it is read and decoded, and nothing afterwards; values longer
// than 64 KiB are never kept in the decoder's cache of repeated values.
//
// # Rows (PROTOCOLS 1.1)
//
// Each non-blank line must be exactly one JSON object (RFC 8259 grammar,
// JSON whitespace around it). The whole line is validated, nested extras
// included: UTF-8 (also inside strings), string escapes, the number
// grammar (no NaN, Infinity, leading zeros, '+', hex), numbers that
// overflow float64 (1e999, also inside nested extras; numbers that underflow
// round to zero or a subnormal as strconv does), no key repeated within any
// object (keys compare after unescaping, so "a" and "\u0061" are the same),
// nesting at most 10000 deep (as encoding/json). Strings must be text: an
// escaped UTF-16 surrogate pair is one character, but an escaped lone
// surrogate ("A\ud800") is no character at all and makes the row bad,
// naming the field ("invalid text: lone surrogate \ud800 at column 27"),
// in keys and nested values too (RFC 7493 forbids it; encoding/json's
// U+FFFD would make "A\ud800" and "A\udfff" one label). An error inside a
// key names the object holding the key (none for the row, "components",
// or the field whose value holds it) and says "in a key".
//
//	reward          number, required (null, a string, a bool, missing: error)
//	regime_id       string, required (null is an error)
//	regime_origin   string, or null = absent
//	alias_of        string, or null = absent
//	step            integer, or null = absent: an integer literal within
//	                int64, or a number whose value is a whole number of at
//	                most 2^53 (so 1e2 is 100; 1.5 is an error)
//	components      object of name → number, or null = absent; every value
//	                must be a number (null is an error); only the names in
//	                Options.Components are kept, a missing one is 0
//	                (the run's trace says which no row carried:
//	                Trace.Uncarried)
//	invalid_action  bool, or null = absent
//	effective_rank  number, or null = absent
//	gamma           number, or null = absent (a string is an error, not a
//	                value to skip); also a metadata candidate
//	anything else   any JSON value, kept raw for identity and metadata
//
// Keys are case-sensitive. A schema field cannot be an identity field.
//
// # Runs (PROTOCOLS 1.2)
//
// Identity: the tuple of the identity fields (Options.IdentityFields,
// default run_id, seed, algorithm_id, policy_id, task) a row carries, null
// counting as not carried. Values compare as JSON values: numbers by value
// (1 = 1.0 = 1e0 = 10e-1, -0 = 0) but integer literals exactly (the seeds
// 9007199254740993 and 9007199254740992 differ even though float64 cannot
// tell them apart), strings after unescaping, objects regardless of key
// order; a string never equals a number ("1" ≠ 1) nor a bool.
//
// Rows with no identity field are anonymous: the anonymous rows of one
// object form one run, anonymous:<key>, and objects never share one. Runs
// are listed in order of their first row (object order, then line order);
// a run's rows keep object order, then line order; step never reorders.
//
// Run key: "field=value|field=value" over the carried identity fields in
// identity-field order, values rendered as below, nothing escaped. When two
// distinct identities render the same key ("1" and 1; or run_id "a|seed=1"
// and run_id "a", seed 1) Assemble fails with a DataError naming both
// identities and where each was first seen.
//
// Metadata: a field that is not a schema field (identity fields and gamma
// included) and is present, not null, on every row of the run with one JSON
// value (as compared above), rendered as a string:
//
//	string   as it is (unescaped)
//	bool     true / false
//	number   an integer literal: its digits ("-0" gives 0); any other
//	         number: its nearest float64 v; if v is a whole number with
//	         |v| ≤ 2^53, its integer digits (1.0 → 1, 1.5e6 → 1500000);
//	         otherwise strconv.FormatFloat(v, 'g', -1, 64): the shortest
//	         digits that parse back to v, in exponent form when the decimal
//	         exponent is below -4 or at least 6 (0.1, 0.0003, 1e-05,
//	         1.2345675e+06, 1.5e+16). This is Go's rule, not Python's repr.
//	object,  compact JSON: no spaces, object keys sorted bytewise (UTF-8),
//	array    numbers as above, strings escaped only for '"', '\' and
//	         U+0000–U+001F (\b \f \n \r \t, else \u00xx), all other
//	         characters raw ({"a":1,"b":[1.5,"é"]})
//
// Meta["source"] is always the key of the object holding the run's first
// row, as handed to DecodeObject (relative to the input prefix); a recorded
// field named source is replaced by it. Gamma is the first non-null gamma on
// the run's rows (the Builder's rule). A label's origin is the first
// non-null regime_origin on its rows, else the first alias_of, else itself.
//
// Limits (Options; 0 means the default, negative means none):
// MaxLineBytes, MaxObjectBytes, MaxLabels (distinct labels in one run,
// default 100000, --max-labels) and MaxRuns (runs in one object and in the
// whole job, default 100000, --max-runs).
//
// # Spilling
//
// A run may span several objects, so no run is complete before the last
// object is decoded, and holding every decoded object until then takes
// memory in proportion to the sweep. Past --memory-limit the pipeline
// spills objects as they are decoded and hands runs to the scorer one at a
// time:
//
//	obj, err := readers.DecodeObject(url, key, r, opts)
//	if over the limit { err = obj.Spill(spillDir) }   // rows to a temporary file
//	...
//	err = readers.AssembleEach(objs, opts, func(i int, t *skyfall.Trace) error {
//		return score(t)                                // t is run i; drop it when done
//	})
//
// Lifecycle of a spill file. Spill writes the row columns of every run of
// the object (a skyfall binary trace per run, one after the other) to one
// new file made by os.CreateTemp in the spill directory, materialising one
// run's dense columns at a time (each run's lent to the next through a
// skyfall.TracePool), and drops them from memory; what stays is the header
// that Assemble needs without reading rows (identities, run keys, the
// fields constant over each run, label origins, row counts, where each
// run's columns lie in the file): some hundreds of bytes a run, against
// tens of bytes a row. AssembleEach then
// holds, besides the objects left in memory, one run's columns and the
// encoding of one of its parts. The file is removed
//
//   - by AssembleEach (and Assemble) as soon as the last of the object's
//     runs has been read back, and in any case before it returns, with or
//     without an error: assembling consumes a spilled object, which can
//     then not be assembled again;
//   - by Release, whenever the pipeline gives up on the object (a failed
//     job, a cancelled context): call it on every decoded object, spilled
//     or not, that will not be assembled;
//   - by Spill itself, when writing fails.
//
// Nothing else here deletes it: a process killed meanwhile leaves it
// behind, so the spill directory should be a temporary one (the files are
// named crlbatch-spill-*; the pipeline gives each job a folder of its own,
// and removes the folders killed jobs left).
//
// Reading a spill file back can fail only through the local disk (or
// someone deleting or changing the file): those errors are plain errors,
// never a *DataError, naming the object and the file.
//
// The methods of one ObjectRuns must not be called concurrently; distinct
// objects are independent (several may be spilled at once).
//
// # Parquet objects and the codec of decoded objects
//
// ParquetLines reads a Parquet trace object (its columns the row fields)
// as the JSON Lines text of the same rows, one row a line, row group by row
// group, after checking the columns of the protocol's fields
// (ParquetField): decoding that text gives exactly what the same rows in
// JSON Lines give, and DataError.Row makes errors say "row N". A decimal
// column is a number column: a cell is written as its exact decimal text
// (0.016979, 2.50), as JSON Lines holds it. A date, time or timestamp
// cell is the JSON string of its ISO 8601 text (parquet_time.go: UTC-
// adjusted timestamps in UTC with a Z, fractions of a second trimmed; the
// direct way renders a batch's cells once). The columns crlbatch.json_columns
// lists, and the places of Parquet's JSON logical type at any depth
// (pqJSONShape), hold JSON text, copied into the row only when it is
// exactly one JSON value (its line breaks as spaces); any other cell fails
// the object naming the row and the column, never adding fields or rows.
// A damaged file (a page that does not decompress or parse, a column chunk
// cut short) is a DataError naming the first row of the batch the reader
// failed on, the damaged column and the cause once ("row 1: column step:
// parquet: could not decompress page: …"): once the batch has failed, the
// top-level columns are read again one at a time, in schema order, through
// that batch's rows, and the first that fails alone is named with its own
// cause; when none does, no column is named (TestParquetCorruptPages,
// TestParquetDamagedColumnExact). Nothing is read again on success. An
// error of the ReaderAt's own reads (the store's, kept by pqSource), in
// the batch or in the reading again, is returned as it is, never as a
// DataError. Fields whose ParquetField has a Folder (HiveFolders: the
// Hive-style folders of the object's path, algorithm_id=ppo/) are every
// row's: appended to each line, or, where the file also holds the column,
// each cell checked against the folder's value (a DataError naming row,
// column and folder); a folder naming one of the protocol's row fields is
// refused before any row is read (parquet_hive.go).
// DecodeParquet is skyfall's direct way (parquet_direct.go): the same
// checks, then the columns read a batch of rows at a time (4,096, fewer
// past 256 columns: pqDirectRows) straight into
// the parts' builders, with the grouping core and metadata candidates of
// DecodeObject and no JSON text; a file or row it does not hold to the
// JSON Lines outcome itself (a bad row, a limit, a list or struct extra
// column, JSON text that is an object or an array, a column a folder also
// gives; a folder's field alone is a column of one value) is read again the
// general way, so errors, bad rows and limits are those of ParquetLines,
// word for word (FuzzParquetDirect, TestDecodeParquet*). Its top-level
// string, number and boolean columns are decoded a page at a time by the package
// itself (parquet_pages.go: levels and dictionary indices run by run), the
// components map, a components struct (one flat reader a member) and
// other leaves by arrow-go's column chunk readers
// (parquet_maprd.go); TestPQReadersPaged holds the two ways to the same
// values row by row. The pages of an object held in memory (a
// *bytes.Reader: the engine's small objects) are read from its bytes by
// the package's own page reader (parquet_pagerd.go: headers decoded here,
// pages decompressed by arrow-go's codec into a kept buffer, uncompressed
// ones taken where they lie), which yields arrow-go's pages or stops the
// direct way (TestPQPageReader, TestPQPageReaderDamaged); other objects'
// pages by arrow-go's page reader. Page headers' crcs, where there are
// any, are checked a column chunk at a time on every way an object is read
// (pqChecked: the direct way's own page reader and arrow-go's readers
// alike, in memory or by ranges): a page whose bytes do not match is a
// DataError naming the batch's first row and the column ("row 4097: column
// reward: parquet: page checksum mismatch (…)", TestParquetPageChecksums),
// not a reason to read the object the general way. A stretch of rows of one run and one regime_id, none
// with a regime_origin or alias_of, goes to its builder a column at a time
// (skyfall.Builder.AddColumns), the others a row at a time;
// TestDecodeParquetBulk holds the two to the same decoded object and
// MemBytes. ConvertObject
// writes a JSON Lines object in that form (parquet.go,
// parquet_convert.go): zstd pages, but a column zstd would not shrink by
// an eighth (random float64s: rewards, log-probabilities) uncompressed,
// every page header holding its page's CRC-32 (parquet_crcwrite.go,
// as Converted.WriteTo writes the file), and its JSON-text columns of
// Parquet's JSON type besides crlbatch.json_columns (a copy without the
// file's key/value metadata, DuckDB's, reads them so), and its objects of
// numbers (components) as a struct of float64 columns where every row
// lists the members in the order they first appeared, else as a map (a
// struct's members are read a column each, without a key per member and
// row). It reads the object twice: the
// first read learns each column's type, the second builds the row groups
// as their rows arrive (a row group's columns held, never the object's
// rows), and the two reads' CRC-32C must agree (ErrChangedWhileConverting);
// ConvertToParquet does the same from a reader, holding its bytes. The file
// built is held in memory up to ConvertHoldBytes, then, with
// ConvertObjectSpilled, in a spill file the caller makes
// (parquet_spill.go; a failing one is a SpillError).
// The page buffers and the buffers of objects read whole come from pools
// by power-of-two size (parquet_pool.go); a new one of 4 MiB or more is
// advised for transparent huge pages before it is filled (internal/hugemem).
// Once a Parquet job's objects are read, IdleParquetMemory carves the
// pool's idle buffers (already touched) into the memory of the traces'
// dense columns (the skyfall decoder's TracePool.Mem), unless
// UseIdleParquetMemory(false) (the pipeline's rule: not under a memory
// limit below 256 MiB). UseSlabs passes the pipeline's choice of shared
// slabs for the decoded rows' chunks on to skyfall (skyfall.UseSlabs), so
// the pipeline names no protocol.
//
// ObjectRuns.AppendEncoding and ObjectRecords.AppendEncoding write a
// decoded object to bytes, DecodeEncodedObject and DecodeEncodedRecords
// read it back: assembling what is read back gives the runs assembling the
// decoded objects gives, bit for bit (codec.go, CodecVersion). A skyfall
// object read back keeps each part's rows as their encoded skyfall trace,
// as a spilled object keeps them in its file, and decodes the trace when
// the part's run is built. ObjectRuns.Encoding gives the same bytes as a
// stream of a length known first (each part's trace measured from its
// builder, Builder.BinarySize, then encoded from the builder's compact
// rows a column at a time, Builder.WriteBinaryTo), which the cache
// compresses as it is written, so that no copy of a whole encoding, nor a
// part's trace of dense columns, is held. A spilled object's runs are
// written the same way.
//
// # The decoder and its benchmark
//
// Skyfall rows are decoded by a hand-written scanner specialised to the row
// shape (scan.go; DecodeRecords validates its rows with the same lexer,
// then groups and assembles them with the same core, runs.go): one pass, no reflection, no allocation per row on the fast
// path (buffers are reused, labels interned per object, string values are
// views of the line unless they hold escapes), SWAR loops over strings and
// digits (a number's digits converted eight at a time as they are
// scanned), and numbers converted with Clinger's fast path or Eisel-Lemire
// on that significand (strconv.ParseFloat only as the fallback). It
// does more than the libraries below: full validation with repeated keys,
// UTF-8, overflow, and capture of every extra field for metadata. A
// differential fuzz test (FuzzDecodeRow) holds it to a reference decoder
// built on encoding/json.
//
// Rows of one object nearly always share a shape, and the decoder of an
// object learns it (keys.go). It numbers the keys it meets (up to 64 per
// object level), predicts each key from the one before it (either of the
// last two keys that followed it; the last one is tried inline where a key
// is read with its colon, keyTable.predictedColon), and accepts a prediction only when the
// raw bytes match; the repeated-key check is then a bit test. A key the
// prediction misses is looked up among the known keys by its first two
// bytes, again accepted only on matching raw bytes, before it is scanned;
// while the predictions of an object level keep missing (keys in another
// order on most rows, as Python's dicts often are) that lookup comes right
// after the inline prediction, and the other key that followed is not tried.
// A value of a
// non-schema field whose raw bytes repeat that field's last valid value
// (run identity, gamma, constant metadata) is taken without being scanned
// again, a row whose identity values all repeat finds its run without
// copying them (without visiting them while no cached value has changed),
// and a row on which every live metadata candidate of its run
// repeats a cached value already found equal to it, with no cached value
// changed since, skips their comparisons. A field whose values keep
// changing stops being cached. A row that starts with the last row's
// bytes up to its first member that is not such a repeated value (a
// schema field, gamma, another value) takes those members over after one
// comparison of the bytes (prefix.go): on the nightly sweeps, the run's
// identity and metadata at the start of every row.
// Nothing is trusted: any mismatch takes the general path, and the second
// differential fuzz test (FuzzDecodeSequence) requires every line decoded
// after the lines before it to give exactly what a fresh decoder gives it,
// the error message included, and what a decoder that never takes a
// prefix over leaves, its value caches, key predictions and extras
// included.
//
// A row is decoded where it lies, before its line's end is looked for:
// the line reader offers the bytes from a line's start to the end of its
// buffer (a chunk its lines), and the decoder reads the row from them,
// the '\n' that ends its line being no whitespace there, so that a row
// must end at it and can never read on into the next line (decodeInPlace).
// A row that fails so, bad or not all in the buffer, is decoded again as
// its line alone, which gives its error or succeeds once the line is
// whole; it saves a pass over every byte that finds the line ends first.
// TestInPlaceMatchesLines holds whole objects and chunks to what decoding
// every line alone gives, and both fuzz tests hold single rows and
// sequences of rows to it.
//
// What an object's decoder learns is its own: the next object (or chunk)
// of the same components and identity fields takes a decoder from a pool
// (decpool.go) with its key tables back as they were built, the keys met
// since, their order and cached values dropped, and every other field as
// new (TestRecycledDecoderIsFresh compares the two field for field). A
// sweep of many small objects builds no key table per object.
//
// decode_bench_test.go decodes 20000 realistic rows (~490 bytes: identity
// fields, step, regime_id, reward, four components, invalid_action,
// effective_rank, gamma, obs_hash, logp, value, entropy; full-precision
// floats) and aggregates them into a skyfall.Builder, on one core (-cpu 1)
// of the 2-core development machine (Go 1.26, Xeon):
//
//	go test ./readers -run XXX -bench Decode -benchmem -cpu 1 -count 6
//
// (BenchmarkDecodeFile, also matched, decodes the file named by
// CRLBATCH_BENCH_FILE, a real sweep's object, and skips without it.)
//
//	decoder                      MB/s   MB/s (CPU)   allocs/row
//	encoding/json (struct)         62           62         29.5
//	goccy/go-json (struct)        270          269         19.5
//	valyala/fastjson (Parser)     271          270          0.26
//	this scanner                  508          505          0.012
//	DecodeObject, plain           480          477          0.017
//	DecodeObject, gzip            161          160          0.018
//	DecodeObject, zstd            310          308          0.017
//
// Best of six runs, on a quiet machine. MB/s is wall clock (SetBytes); MB/s
// (CPU) is bytes per second of process CPU time, garbage collection
// included (the cpuMB/s metric), which swings much less than wall clock
// when the machine is shared. The DecodeObject rows do everything the reader
// does per object (line splitting, decompression, full validation, identity
// grouping, metadata inference, the Builder), the others the row decoding
// and the Builder only; the libraries check less than the scanner (no
// repeated keys, no overflow, no capture of extras). The scanner is the
// choice: about 1.9 times the fast libraries and 8 times encoding/json,
// while being the only one that checks everything PROTOCOLS 1.1 asks.
//
// SIMD structural indexing was measured against it too (issue 16;
// bench/decode_candidates.sh, in its own module bench/decodecand): per CPU
// second on one core, simdjson-go's parse to its tape alone reads about 0.47
// times the bytes DecodeObject reads on both sweep shapes, and a structural
// index of our own in pure Go costs 80-90 % of DecodeObject's time by itself.
// docs/performance-history.md, "The decoder, issue 16, third round", has the
// table and why.
package readers
