package readers

import "fmt"

// RunKeyConflicts lists every run-key conflict among objects (in bytewise
// key order, as for Assemble): each identity whose run key an earlier,
// distinct identity already renders ("1" and 1), as the *DataError that
// Assemble returns for the first of them. Assemble stops at the first
// conflict; a sweep check (crlbatch validate) reports them all. It reads
// only the objects' headers, so it works on spilled objects too, and it
// modifies nothing.
func RunKeyConflicts(objects []*ObjectRuns) []*DataError {
	var hs []runHeader
	for _, o := range objects {
		for _, p := range o.parts {
			hs = append(hs, runHeader{url: o.URL, anon: p.anon, identKey: p.identKey, runKey: p.runKey, ident: p.ident, firstLine: p.firstLine})
		}
	}
	return runKeyConflicts(hs)
}

// RecordRunKeyConflicts is RunKeyConflicts for the objects of a record
// protocol, as AssembleRecords groups them.
func RecordRunKeyConflicts(objects []*ObjectRecords) []*DataError {
	var hs []runHeader
	for _, o := range objects {
		for _, p := range o.parts {
			hs = append(hs, runHeader{url: o.URL, anon: p.anon, identKey: p.identKey, runKey: p.runKey, ident: p.ident, firstLine: p.firstLine})
		}
	}
	return runKeyConflicts(hs)
}

// runHeader is what a conflict check needs of one part.
type runHeader struct {
	url       string
	anon      bool
	identKey  string
	runKey    string
	ident     []identValue
	firstLine int
}

func runKeyConflicts(hs []runHeader) []*DataError {
	var out []*DataError
	seen := map[string]bool{}        // identities met
	byKey := map[string]*runHeader{} // the first identity of each run key
	for i := range hs {
		h := &hs[i]
		if !h.anon {
			if seen[h.identKey] {
				continue
			}
			seen[h.identKey] = true
		}
		prev := byKey[h.runKey]
		if prev == nil {
			byKey[h.runKey] = h
			continue
		}
		out = append(out, &DataError{URL: h.url, Line: h.firstLine, Msg: fmt.Sprintf(
			"run key %q stands for two distinct identities: %s (first at %s line %d) and %s (first here)",
			h.runKey, describeIdent(prev.ident), prev.url, prev.firstLine, describeIdent(h.ident))})
	}
	return out
}
