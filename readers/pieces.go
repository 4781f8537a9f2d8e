package readers

// RunPiece names the part of one run within one decoded object: its run
// key and the line of its first row. SplitRuns gives one per part, in the
// object's order of first row, beside an object holding that part alone.
type RunPiece struct {
	RunKey    string
	FirstLine int
}

// SplitRuns splits the decoded object into objects of one run part each,
// in order of first row, sharing the rows (nothing is copied): an engine
// that sends each run's parts to one worker (Apache Beam) encodes each
// piece (AppendEncoding) and assembles a run from the pieces of its key,
// objects in key order, as Assemble would from the whole objects. Each
// piece keeps the object's info (URL, key, counts). The object must hold
// its rows (neither spilled nor released).
func (o *ObjectRuns) SplitRuns() ([]RunPiece, []*ObjectRuns) {
	pcs := make([]RunPiece, len(o.parts))
	objs := make([]*ObjectRuns, len(o.parts))
	for i, p := range o.parts {
		pcs[i] = RunPiece{RunKey: p.runKey, FirstLine: p.firstLine}
		objs[i] = &ObjectRuns{ObjectInfo: o.ObjectInfo, comps: o.comps, parts: []*part{p}}
	}
	return pcs, objs
}

// SplitRuns splits the decoded object into objects of one run part each,
// as ObjectRuns.SplitRuns does.
func (o *ObjectRecords) SplitRuns() ([]RunPiece, []*ObjectRecords) {
	pcs := make([]RunPiece, len(o.parts))
	objs := make([]*ObjectRecords, len(o.parts))
	for i, p := range o.parts {
		pcs[i] = RunPiece{RunKey: p.runKey, FirstLine: p.firstLine}
		objs[i] = &ObjectRecords{ObjectInfo: o.ObjectInfo, idents: o.idents, schema: o.schema, parts: []*recordPart{p}}
	}
	return pcs, objs
}
