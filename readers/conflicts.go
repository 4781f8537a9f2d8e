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
			hs = append(hs, runHeader{o.URL, p.header()})
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
			hs = append(hs, runHeader{o.URL, p.header()})
		}
	}
	return runKeyConflicts(hs)
}

// runHeader is a part's header and the URL of its object.
type runHeader struct {
	url string
	partHeader
}

// keyClash is the error of h, whose run key prev's distinct identity
// rendered first.
func keyClash(prev, h runHeader) *DataError {
	return &DataError{URL: h.url, Line: h.firstLine, Msg: fmt.Sprintf(
		"run key %q stands for two distinct identities: %s (first at %s line %d) and %s (first here)",
		h.runKey, describeIdent(prev.ident), prev.url, prev.firstLine, describeIdent(h.ident))}
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
		out = append(out, keyClash(*prev, *h))
	}
	return out
}
