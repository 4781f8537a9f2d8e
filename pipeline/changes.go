package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/diff"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/published"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// previous is what a nightly job compares its result with: the newest
// complete result of the history when the job started (nil on the first
// night), or why it could not be read.
type previous struct {
	// url names the result this job is about to publish, build the
	// crlbatch build writing it (its manifest's version and commit).
	url    string
	build  published.Build
	result *published.Result
	// err is why the previous result could not be read; the report says
	// so in place of the changes, and the job goes on.
	err error
	// ahead names the newest complete result whose attempt id starts
	// after this machine's clock ("" if none): LATEST, which moves only
	// forward by attempt id, will not name this job's result.
	ahead, aheadURL string
}

// loadPrevious reads the newest complete result of a --history OUTPUT, for
// the report's "Changes since the previous result" (issue 12): by attempt
// id, as LATEST names it once the next job has moved it (LATEST may lag: a
// job killed between its manifest and LATEST, or LATEST set back by hand).
// A one-off job compares with nothing (nil). A previous result that cannot
// be read does not fail the night: its error is kept for the report and
// logged.
func (j *job) loadPrevious(ctx context.Context, b *blob.Bucket, target string) (*previous, error) {
	if !j.cfg.History {
		return nil, nil
	}
	p := &previous{url: j.out.ObjectURL(target), build: published.Build{Version: j.cfg.Version, Commit: j.cfg.Commit}}
	st, err := j.scanHistory(ctx, b)
	if err == nil {
		// The newest complete result that started before this job: one
		// that a concurrent job started later and finished first is not
		// this result's predecessor.
		id, now := "", time.Now()
		for c := range st.complete {
			if c < j.attempt {
				id = max(id, c)
			} else if c > j.attempt && attemptStart(c).After(now) && c > p.ahead {
				// Not a job started after this one (it would have started
				// before now): one whose clock ran ahead of this one's.
				p.ahead = c
			}
		}
		if p.ahead != "" {
			p.aheadURL = strings.TrimSuffix(j.out.ObjectURL(j.out.Prefix+ResultsDir+p.ahead+"/"), "/")
			j.log.Warn("this job's result is not the newest, and LATEST will not name it: a complete result in OUTPUT started after this machine's clock by its attempt id, and LATEST moves only forward; one of the two clocks is wrong",
				"output", j.out.String(), "newer", p.aheadURL)
		}
		if id == "" {
			return p, nil // the first night, or only results from ahead
		}
		p.result, err = published.Load(ctx, b, j.out, j.out.Prefix+ResultsDir+id+"/")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.err = err
		j.log.Warn("the previous result could not be read: the report says what changed since it only when it can", "output", j.out.String(), "error", redactErr(err))
	}
	return p, nil
}

// section is the report's "Changes since the previous result" for the
// result a job has just reduced (fres, with the rendered params), or ""
// for a one-off job and on the first night.
func (p *previous) section(params any, fres *family.Result, scored []*scoring.Scored) (string, error) {
	if p == nil || (p.result == nil && p.err == nil && p.ahead == "") {
		return "", nil
	}
	sec, err := p.changes(params, fres, scored)
	if err != nil || p.ahead == "" {
		return sec, err
	}
	return sec + fmt.Sprintf("\n**Not the newest result.** %s, whose attempt id says it started after this machine's clock when this job ran, is complete: `LATEST` names it, not this result (it moves only forward by attempt id), and `crlbatch latest` and `crlbatch diff --nights` take it as the newest until a result with a later id is published. The clock of this machine or of the one that wrote it is wrong.\n",
		writers.Code(p.aheadURL)), nil
}

// changes is section's comparison with the previous result: the changes,
// why there are none, or why nothing is compared.
func (p *previous) changes(params any, fres *family.Result, scored []*scoring.Scored) (string, error) {
	if p.result == nil && p.err == nil {
		return "## Changes since the previous result\n\nNo complete result started before this one, so nothing is compared.\n", nil
	}
	if p.err != nil {
		return fmt.Sprintf("## Changes since the previous result\n\nThe previous result could not be read, so nothing is compared: %s.\n",
			writers.Text(strings.TrimSuffix(redactErr(p.err).Error(), "."))), nil
	}
	var runs []published.Run
	for _, f := range fres.Families {
		for _, i := range f.Runs {
			runs = append(runs, published.Run{Key: scored[i].Key, Family: f.Name})
		}
	}
	cur, err := published.FromFamilies(p.url, p.build, params, fres, runs)
	if err != nil {
		return "", fmt.Errorf("comparing with the previous result: %w", err)
	}
	return diff.Section(p.result, cur), nil
}
