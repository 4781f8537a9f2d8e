// Package published loads a published crlbatch result back for comparison
// (crlbatch diff, the nightly report's "Changes since the previous
// result"): its manifest.json, the family × metric rows of
// families.parquet and the run keys of its run tables, from any blob URL
// or local folder, through the storage package (gocloud.dev/blob).
//
// A Result carries the crlbatch build that wrote it (Build: manifest.json's
// version and commit, "" where a manifest has none); FromFamilies is given
// the running build's, so that a job's own result compares with a
// published one like for like.
//
// A result is a folder (a key prefix) that holds a complete result: its
// manifest.json exists (it is written last). A nightly history is a
// folder OUTPUT with one result per attempt under OUTPUT/results/<attempt-id>/
// (attempt ids YYYYMMDDTHHMMSSZ-<suffix>, which sort in time order) and
// OUTPUT/LATEST holding "results/<attempt-id>/\n", the newest complete
// one; Nights finds the newest results of such a history. FromFamilies
// builds, from a job's reduction, the Result that Load will read once it
// is published, so that a job can compare itself with the previous
// result before it publishes.
//
// Errors are typed for the exit status: a location that is not a
// complete result, or a history with fewer results than asked, is a
// *storage.UsageError (2); a store that fails to list or read is a
// *storage.StorageError (3); a manifest or Parquet file that cannot be
// decoded, or a file the manifest lists that is not there, is a
// *storage.DataError (1). The package starts no goroutine and
// writes nothing.
package published
