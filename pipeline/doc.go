// Package pipeline is crlbatch's local engine. It drives the steps of a
// protocol's scoring.Job and imports no protocol package: it lists the
// trace objects under an input prefix, reads and decodes them concurrently
// (Decoder.Decode), assembles runs (Decoder.Assemble), lets the job prepare
// (a ceiling derived from the data; over the decoder's lighter runs when
// it has them: scoring.LightAssembler),
// scores the runs concurrently
// (Job.Score), reduces them to families (protocol/family), has the job
// render its tables and report, encodes them as Parquet (small tables on
// several goroutines at once, large ones one at a time) and publishes
// everything under an output prefix, the result files four at once and the
// manifest last (report.html is converted from report.md as it is written,
// never held whole); an upload to an object store that is under way when
// the job is cancelled may finish for a moment (uploadGrace), so that
// clean-up knows whether it has to delete it. The steps hand their results on as values (read, result), not
// through shared state.
//
// Publishing (publish.go, claim.go) has two layouts: one-off, directly
// under OUTPUT, claimed by the job with a conditional create and replaced
// in place by --overwrite; nightly (--history), one results/<attempt-id>/
// per job, a LATEST pointer that only moves forward, a Hive-partitioned
// history/ view, --keep, and the removal of what provably dead jobs left.
// On S3 that includes their incomplete multipart uploads (uploads.go): a
// one-off job aborts those of OUTPUT's result files, a nightly job those
// of attempts whose claim's holder is dead. Latest finds the newest
// complete result of either. Parquet files carry only the provenance that
// is the same for the same inputs (provenance.go); the manifest carries
// the rest.
//
// Storage is reached only through package storage (gocloud.dev/blob URLs:
// plain local paths, file://, s3://, gs://, azblob://, mem://); the drivers
// are blank-imported by the binary, never here. Concurrency lives here and
// nowhere else: bounded errgroups whose tasks each write their own slot, so
// that every output is in the canonical order of PROTOCOLS whatever the
// number of workers, and the first failing run in that order is the one
// reported; objects are read by ordered (ordered.go), whose error is the
// first object in key order that fails, whatever the timing. An object
// holding more than 1/--concurrency of the sweep's bytes, and the last of
// several objects unless named as gzip or zstd, is decoded in chunks on --concurrency goroutines and merged in order
// (chunks.go), when the protocol's decoder can (scoring.Splitter), with
// exactly the result of decoding it on one.
//
// Input forms: an object whose first bytes are PAR1 is a Parquet trace
// object (parquet.go), read whole from the stream that is checked for
// size and hashed when it has at most 16 MiB, else by ranges from the
// bucket (its footer, then each column chunk as needed; the object's bytes
// in order are still read once for the size check and hash), through the
// protocol's decoder's
// DecodeParquet when it has one (scoring.ParquetDecoder: skyfall's reads
// the columns straight into its runs), else through readers.ParquetLines
// as the JSON Lines rows it holds; anything else goes to the protocol's
// decoder as it is. A local object that the store maps (storage.Mapped)
// is decoded from its mapped bytes, whole or in chunks (readers.MappedReader:
// the object's reader counts, hashes and checks the bytes consumed as it
// does those read).
// With --cache (cache.go), every object is first looked up in the
// decoded-object cache by its URL, key, size, ETag, MD5, modification time
// and the decoder's scoring.Codec key; a hit is the decoder's encoding read
// back instead of the object, a miss is decoded and then stored, its
// entry encoded and written on a goroutine beside the job (at most
// --concurrency at once) that the job waits for before it publishes. An
// object that grew by lines appended since its entry was stored
// (appended.go: a tails entry beside the entry keeps the size and hashes
// of the bytes it came from, checked by range reads) has only its new
// lines decoded, continuing the entry read back (scoring.Resumer). The
// manifest says per object which it was (decoded, parquet, cache,
// appended). When
// the protocol's runs split into pieces and its scored runs encode,
// runcache.go keeps per object an index of its run pieces and per run its
// scored run, keyed by its pieces' entries, the job's scoring key and the
// build: an unchanged run (whose preparation, scoring.Contributor, gives it
// the same, or whose scored run the job brings to a moved preparation,
// scoring.Reapplier) is served, its objects not read at all. reducecache.go
// keeps each family's rows, keyed by the exact bits of its runs and the
// baseline's, every reduction option and the build, and each row alone,
// keyed by what it depends on of one metric; figures.go each
// figure's SVG and PNG, keyed by its inputs (figures.Figure.Key, computed
// without drawing) and the build; those entries (and the object indexes)
// are encoded on the job's path and written by goroutines beside it, one
// at a time on a local cache and sixteen at a time on a remote one, where
// each write is a round trip (putLater), waited for with the objects'
// entries before the job publishes; on a remote cache the entries are
// looked up thirty-two at a time (eachEntry; the figures' all before any
// is drawn; of the objects' own entries, each megabytes and read
// --concurrency at a time, only whether each is there), locally within
// --concurrency (a figure's as it is drawn), and on a remote input the objects' attributes that key
// their entries are read thirty-two at a time (keyObjects). With --cache, the objects decoded in a pass (a warm
// rerun's changed ones) share the cores among themselves: one large
// enough is decoded in chunks.
// Convert (convert.go) is `crlbatch convert`; a Parquet file past
// readers.ConvertHoldBytes waits in a spill folder of its own, as score's
// spilled rows do (spill.go).
//
// Memory: decoded objects hold their rows in the decoder's compact form;
// every pass over the runs assembles them one at a time, the runs being
// scored lend what they hold to the next ones (Decoder.Done), and past
// --memory-limit objects that can spill (scoring.Spiller) go to local disk,
// into a folder of the job's own under --spill-dir (spill.go), removed when
// the job ends; the first spill of a job removes the folders this host's
// killed jobs left (their process gone).
// Once the scoring pass is over the decoded rows are dropped and collected
// at once (runtime.GC), before the reduction and the writers allocate.
//
// Errors carry their kind so that the command line can map them to exit
// statuses: *UsageError (2), *readers.DataError and *DataError (1),
// *StorageError (3), and context cancellation (130/143); a panic (a bug)
// is recovered on the goroutine where it happened (internal.go) and fails
// the job as an *InternalError (70).
package pipeline
