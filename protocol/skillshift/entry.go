package skillshift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crlbatch/crlbatch/protocol"
)

// Entry is a transcribed leaderboard entry: per metric, its ten numbers.
type Entry struct {
	// Metrics holds the metrics the entry names, in the order of Metrics.
	Metrics []EntryMetric
	// Reasons is the entry's reasons object: why each null is null.
	Reasons map[string]string
}

// EntryMetric is one metric of an entry. An absent number is a
// protocol.Value whose reason comes from the entry's reasons.
type EntryMetric struct {
	Metric string
	// Null is true when the metric itself is null (not applicable); the
	// numbers below are then absent with Reason.
	Null   bool
	Reason string
	// Websites is aligned with ExpectedSites, Conditions with
	// ExpectedConditions.
	Websites   [3]protocol.Value
	Conditions [6]protocol.Value
	Overall    protocol.Value
	// CellReasons holds the reasons keyed "METRIC.cells.…": the entry
	// declares that a grid cell behind its marginals is absent.
	CellReasons []string
}

// MetricCheck is the identity check of one metric of an entry.
type MetricCheck struct {
	Metric   string
	Identity Identity
}

// Line renders the check as the one line check-entry prints:
//
//	SR   pass  mean(websites) 35.29  mean(conditions) 35.28  overall 35.29
func (c MetricCheck) Line() string {
	return fmt.Sprintf("%-4s %s", c.Metric, c.Identity.Summary())
}

// EntryResult is the check of every metric of an entry.
type EntryResult struct {
	Checks []MetricCheck
}

// Failed reports whether any metric failed its identity check.
func (r *EntryResult) Failed() bool {
	for _, c := range r.Checks {
		if c.Identity.Status == StatusFail {
			return true
		}
	}
	return false
}

// Lines renders one line per metric, in the order of Metrics.
func (r *EntryResult) Lines() []string {
	out := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = c.Line()
	}
	return out
}

// CheckEntry parses an entry (ParseEntry) and checks it (Entry.Check): the
// pure part of `crlbatch check-entry ENTRY.json`. An error means the entry is
// malformed; a failed identity is reported in the result (Failed).
func CheckEntry(data []byte, bareMetric string) (*EntryResult, error) {
	e, err := ParseEntry(data, bareMetric)
	if err != nil {
		return nil, err
	}
	return e.Check(), nil
}

// maxEntryDepth bounds the nesting of an entry; the format needs 3.
const maxEntryDepth = 32

// ParseEntry reads an entry:
//
//	{"SR": {"websites": {"gitlab": 17.71, "magento": 25.49, "wordpress": 62.66},
//	        "conditions": {"src": 50.07, …, "tgt-exec": 16.90}, "overall": 35.29},
//	 "ASC": null, …, "reasons": {"ASC": "…"}}
//
// or a bare {"websites", "conditions", "overall"} object (with an optional
// "reasons"), which is the one metric bareMetric ("" means SR). Each metric
// holds exactly its three sections, each section exactly its expected keys;
// a metric may be null as a whole. Numbers are finite and ≥ 0, and SR and SFR
// at most 100. Every null needs a reason, keyed "METRIC.websites.SITE",
// "METRIC.conditions.CONDITION", "METRIC.overall" or "METRIC"; a key
// "METRIC.cells.SITE.CONDITION" declares an absent grid cell. A reason for a
// number that is present, a reason key naming nothing in the entry, an
// unknown key, a repeated key, trailing data or invalid UTF-8 is an error.
func ParseEntry(data []byte, bareMetric string) (*Entry, error) {
	if bareMetric == "" {
		bareMetric = SR
	}
	if !isMetric(bareMetric) {
		return nil, fmt.Errorf("metric %q: want one of %s", bareMetric, strings.Join(Metrics, ", "))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, errors.New("entry: invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := parseNode(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("entry: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, errors.New("entry: data after the top-level object")
		}
		return nil, fmt.Errorf("entry: after the top-level object: %w", err)
	}
	if root.kind != kindObject {
		return nil, errors.New("entry: want a JSON object")
	}

	e := &Entry{Reasons: map[string]string{}}
	if rn := root.get("reasons"); rn != nil {
		if rn.kind != kindObject {
			return nil, errors.New("entry: reasons: want an object of strings")
		}
		for i, k := range rn.keys {
			v := rn.vals[i]
			if v.kind != kindString || strings.TrimSpace(v.str) == "" {
				return nil, fmt.Errorf("entry: reasons.%s: want a non-empty string", k)
			}
			e.Reasons[k] = v.str
		}
	}
	metricNodes := map[string]*node{}
	bare := false
	if root.get(sectionWebsites) != nil || root.get(sectionConditions) != nil || root.get(sectionOverall) != nil {
		for _, k := range root.keys {
			switch k {
			case sectionWebsites, sectionConditions, sectionOverall, "reasons":
			default:
				return nil, fmt.Errorf("entry: unknown key %q beside a bare %s/%s/%s object", k, sectionWebsites, sectionConditions, sectionOverall)
			}
		}
		metricNodes[bareMetric] = root
		bare = true
	} else {
		for i, k := range root.keys {
			if k == "reasons" {
				continue
			}
			if !isMetric(k) {
				return nil, fmt.Errorf("entry: unknown key %q (want %s or reasons)", k, strings.Join(Metrics, ", "))
			}
			metricNodes[k] = root.vals[i]
		}
	}
	if len(metricNodes) == 0 {
		return nil, errors.New("entry: no metric")
	}
	used := map[string]bool{}
	for _, name := range Metrics {
		n, ok := metricNodes[name]
		if !ok {
			continue
		}
		m, err := parseMetric(name, n, bare, e.Reasons, used)
		if err != nil {
			return nil, fmt.Errorf("entry: %w", err)
		}
		e.Metrics = append(e.Metrics, m)
	}
	keys := make([]string, 0, len(e.Reasons))
	for k := range e.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if used[k] {
			continue
		}
		metric, rest, _ := strings.Cut(k, ".")
		if _, ok := metricNodes[metric]; !ok {
			return nil, fmt.Errorf("entry: reasons.%s: the entry has no metric %q", k, metric)
		}
		switch {
		case rest == "":
			// A metric-level reason beside present numbers says nothing
			// the check needs; it is kept.
		case strings.HasPrefix(rest, sectionCells+".") && len(rest) > len(sectionCells)+1:
			// Recorded by parseMetric.
		default:
			return nil, fmt.Errorf("entry: reasons.%s: names no null number of the entry", k)
		}
	}
	return e, nil
}

func isMetric(name string) bool {
	for _, m := range Metrics {
		if m == name {
			return true
		}
	}
	return false
}

// parseMetric reads one metric; used collects the reason keys consumed. A
// bare metric is the entry's top-level object, which also holds the reasons.
func parseMetric(name string, n *node, bare bool, reasons map[string]string, used map[string]bool) (EntryMetric, error) {
	m := EntryMetric{Metric: name}
	for k := range reasons {
		if strings.HasPrefix(k, name+"."+sectionCells+".") && len(k) > len(name)+len(sectionCells)+2 {
			m.CellReasons = append(m.CellReasons, k)
		}
	}
	sort.Strings(m.CellReasons)
	if n.kind == kindNull {
		r, ok := reasons[name]
		if !ok {
			return m, fmt.Errorf("%s is null without a reason (reasons.%s)", name, name)
		}
		used[name] = true
		m.Null, m.Reason = true, r
		none := protocol.None(r)
		for i := range m.Websites {
			m.Websites[i] = none
		}
		for i := range m.Conditions {
			m.Conditions[i] = none
		}
		m.Overall = none
		return m, nil
	}
	if n.kind != kindObject {
		return m, fmt.Errorf("%s: want an object of %s, %s and %s, or null", name, sectionWebsites, sectionConditions, sectionOverall)
	}
	for _, k := range n.keys {
		switch k {
		case sectionWebsites, sectionConditions, sectionOverall:
		default:
			if k != "reasons" || !bare {
				return m, fmt.Errorf("%s: unknown key %q", name, k)
			}
		}
	}
	number := func(path string, v *node) (protocol.Value, error) {
		key := name + "." + path
		switch v.kind {
		case kindNull:
			if r, ok := reasons[key]; ok {
				used[key] = true
				return protocol.None(r), nil
			}
			if r, ok := reasons[name]; ok {
				used[name] = true
				return protocol.None(r), nil
			}
			return protocol.Value{}, fmt.Errorf("%s is null without a reason (reasons.%s or reasons.%s)", key, key, name)
		case kindNumber:
			if _, ok := reasons[key]; ok {
				return protocol.Value{}, fmt.Errorf("reasons.%s: the number is present (%v)", key, v.num)
			}
			if v.num < 0 {
				return protocol.Value{}, fmt.Errorf("%s = %v: a metric is never negative", key, v.num)
			}
			if IsPercent(name) && v.num > 100 {
				return protocol.Value{}, fmt.Errorf("%s = %v: a percentage is at most 100", key, v.num)
			}
			return protocol.Some(v.num), nil
		}
		return protocol.Value{}, fmt.Errorf("%s: want a number or null", key)
	}
	section := func(sec string, want []string, out []protocol.Value) error {
		s := n.get(sec)
		if s == nil {
			return fmt.Errorf("%s: missing %s", name, sec)
		}
		if s.kind != kindObject {
			return fmt.Errorf("%s.%s: want an object of %s", name, sec, strings.Join(want, ", "))
		}
		for _, k := range s.keys {
			if indexOf(want, k) < 0 {
				return fmt.Errorf("%s.%s: unknown key %q (want %s)", name, sec, k, strings.Join(want, ", "))
			}
		}
		for i, k := range want {
			v := s.get(k)
			if v == nil {
				return fmt.Errorf("%s.%s: missing %s", name, sec, k)
			}
			x, err := number(sec+"."+k, v)
			if err != nil {
				return err
			}
			out[i] = x
		}
		return nil
	}
	if err := section(sectionWebsites, ExpectedSites, m.Websites[:]); err != nil {
		return m, err
	}
	if err := section(sectionConditions, ExpectedConditions, m.Conditions[:]); err != nil {
		return m, err
	}
	o := n.get(sectionOverall)
	if o == nil {
		return m, fmt.Errorf("%s: missing %s", name, sectionOverall)
	}
	x, err := number(sectionOverall, o)
	if err != nil {
		return m, err
	}
	m.Overall = x
	return m, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Check runs the identity check of every metric of the entry. A metric null
// as a whole, or with a declared absent grid cell, is skipped; otherwise each
// of the three means is formed when all its numbers are present (the mean of
// the website marginals as a sequential sum in ExpectedSites order over 3,
// the conditions' likewise over 6; not formed when that sum leaves float64)
// and the means that can be formed are compared; fewer than two is a skip.
func (e *Entry) Check() *EntryResult {
	res := &EntryResult{}
	for i := range e.Metrics {
		m := &e.Metrics[i]
		res.Checks = append(res.Checks, MetricCheck{Metric: m.Metric, Identity: m.check(e.Reasons)})
	}
	return res
}

func (m *EntryMetric) check(reasons map[string]string) Identity {
	if m.Null {
		return skipped(m.Metric + " is null: " + m.Reason)
	}
	if len(m.CellReasons) > 0 {
		k := m.CellReasons[0]
		return skipped(fmt.Sprintf("a grid cell is absent (%s: %s), so the marginals average different cells", k, reasons[k]))
	}
	mean := func(sec string, keys []string, vals []protocol.Value) (protocol.Value, string) {
		sum := 0.0
		for i, v := range vals {
			if !v.OK {
				return protocol.None("needs " + sec + "." + keys[i]), fmt.Sprintf("%s.%s is null (%s)", sec, keys[i], v.Reason)
			}
			sum += v.V
		}
		if math.IsInf(sum, 0) {
			// Finite transcribed numbers near ±1e308 whose sum leaves
			// float64: the mean cannot be formed (PROTOCOLS: float64, summed
			// sequentially), so it is not checked, like a null.
			return protocol.None("the sum of " + sec + " leaves float64"), "the sum of " + sec + " leaves float64"
		}
		return protocol.Some(sum / float64(len(vals))), ""
	}
	var means [3]protocol.Value
	var why [3]string
	means[0], why[0] = mean(sectionWebsites, ExpectedSites, m.Websites[:])
	means[1], why[1] = mean(sectionConditions, ExpectedConditions, m.Conditions[:])
	means[2] = m.Overall
	if !m.Overall.OK {
		why[2] = "overall is null (" + m.Overall.Reason + ")"
	}
	return compare(means, why)
}

// JSON renders the entry in canonical form: metrics in the order of
// Metrics, sections and keys in the expected order, reasons in bytewise key
// order. ParseEntry reads it back to an equal entry.
func (e *Entry) JSON() []byte {
	var b bytes.Buffer
	str := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	num := func(v protocol.Value) {
		if !v.OK {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatFloat(v.V, 'g', -1, 64))
	}
	b.WriteByte('{')
	for i := range e.Metrics {
		m := &e.Metrics[i]
		if i > 0 {
			b.WriteByte(',')
		}
		str(m.Metric)
		b.WriteByte(':')
		if m.Null {
			b.WriteString("null")
			continue
		}
		b.WriteString(`{"websites":{`)
		for j, k := range ExpectedSites {
			if j > 0 {
				b.WriteByte(',')
			}
			str(k)
			b.WriteByte(':')
			num(m.Websites[j])
		}
		b.WriteString(`},"conditions":{`)
		for j, k := range ExpectedConditions {
			if j > 0 {
				b.WriteByte(',')
			}
			str(k)
			b.WriteByte(':')
			num(m.Conditions[j])
		}
		b.WriteString(`},"overall":`)
		num(m.Overall)
		b.WriteByte('}')
	}
	keys := make([]string, 0, len(e.Reasons))
	for k := range e.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(e.Metrics) > 0 {
		b.WriteByte(',')
	}
	b.WriteString(`"reasons":{`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		str(k)
		b.WriteByte(':')
		str(e.Reasons[k])
	}
	b.WriteString("}}")
	return b.Bytes()
}

// Entry returns the run's ten numbers per metric as an entry, with a reason
// for every null: the same object a transcribed entry is, so CheckEntry can
// verify a computed run exactly as it verifies a paper. A grid cell without a
// task or with an absent value is declared under "METRIC.cells.SITE.CONDITION".
// It fails when the run's grid holds a site or condition outside the expected
// grid, which ten numbers cannot express.
func (r *RunResult) Entry() (*Entry, error) {
	if extra := missingNames(r.Sites, ExpectedSites); len(extra) > 0 {
		return nil, fmt.Errorf("run %s: site(s) %s are not in the expected grid", r.Key, strings.Join(extra, ", "))
	}
	if extra := missingNames(r.Conditions, ExpectedConditions); len(extra) > 0 {
		return nil, fmt.Errorf("run %s: condition(s) %s are not in the expected grid", r.Key, strings.Join(extra, ", "))
	}
	e := &Entry{Reasons: map[string]string{}}
	for k, v := range r.Reasons {
		e.Reasons[k] = v
	}
	for i := range r.Metrics {
		mr := &r.Metrics[i]
		m := EntryMetric{Metric: mr.Metric}
		if mr.Reason != "" {
			m.Null, m.Reason = true, mr.Reason
			e.Metrics = append(e.Metrics, m)
			continue
		}
		for j, k := range ExpectedSites {
			x, _ := mr.Marginal(ScopeWebsite, k)
			m.Websites[j] = x.Value
		}
		for j, k := range ExpectedConditions {
			x, _ := mr.Marginal(ScopeCondition, k)
			m.Conditions[j] = x.Value
		}
		m.Overall = mr.Overall.Value
		prefix := mr.Metric + "." + sectionCells + "."
		for k := range e.Reasons {
			if strings.HasPrefix(k, prefix) {
				m.CellReasons = append(m.CellReasons, k)
			}
		}
		sort.Strings(m.CellReasons)
		e.Metrics = append(e.Metrics, m)
	}
	return e, nil
}

// The JSON tree of an entry, with object keys in document order.

type nodeKind uint8

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

type node struct {
	kind nodeKind
	num  float64
	str  string
	keys []string
	vals []*node
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// parseNode reads one JSON value; a key repeated within an object, a number
// outside float64 or nesting deeper than maxEntryDepth is an error.
func parseNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxEntryDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxEntryDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool}, nil
	case json.Number:
		x, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("number %s does not fit a float64", t)
		}
		return &node{kind: kindNumber, num: x}, nil
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: kindArray}
			for dec.More() {
				v, err := parseNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '{':
			n := &node{kind: kindObject}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				if seen[k] {
					return nil, fmt.Errorf("key %q repeated in one object", k)
				}
				seen[k] = true
				v, err := parseNode(dec, depth+1)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
