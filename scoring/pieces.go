package scoring

// RunSplitter is implemented by decoders whose objects can be split into
// one object per run part, for an engine that sends the parts of each run
// to one worker (Apache Beam: a GroupByKey on the run key). Assemble over
// the pieces of one run key, in object key order, builds the run Assemble
// builds from the whole objects.
type RunSplitter interface {
	// SplitRuns returns o's run parts, in order of first row, each as an
	// object of its own (sharing o's rows: release o, not the pieces).
	SplitRuns(o Object) ([]Piece, error)
}

// Piece is one run's part of one object.
type Piece struct {
	RunKey    string
	FirstLine int
	Object    Object
}
