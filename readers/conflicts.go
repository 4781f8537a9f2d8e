package readers

// RunKeyConflicts lists every run-key conflict among objects (in bytewise
// key order, as for Assemble): each identity whose run key an earlier,
// distinct identity already renders ("1" and 1), as the *DataError that
// Assemble returns for the first of them. Assemble stops at the first
// conflict; a sweep check (crlbatch validate) reports them all. It reads
// only the objects' headers, so it works on spilled objects too, and it
// modifies nothing.
func RunKeyConflicts(objects []*ObjectRuns) []*DataError {
	return runKeyConflicts[*ObjectRuns, *part](objects)
}

// RecordRunKeyConflicts is RunKeyConflicts for the objects of a record
// protocol, as AssembleRecords groups them.
func RecordRunKeyConflicts(objects []*ObjectRecords) []*DataError {
	return runKeyConflicts[*ObjectRecords, *recordPart](objects)
}
