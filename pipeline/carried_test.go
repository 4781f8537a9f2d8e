package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
)

// TestCarriedFailure: an error carried between workers (carry, JSON, err)
// keeps its text, its kind (the exit status: usage, storage, data), its
// row error's line and field (the message's pointer to the trace format)
// and a limit's readers.ErrLimit.
func TestCarriedFailure(t *testing.T) {
	row := &readers.DataError{URL: "s3://b/x.jsonl", Line: 7, Field: "reward", Msg: "got string, want number"}
	limit := &readers.DataError{URL: "s3://b/x.jsonl", Line: 9, Field: "regime_id", Msg: "run r has more than 1 labels", Err: readers.ErrLimit}
	parquet := &readers.DataError{URL: "s3://b/x.parquet", Line: 4097, Row: true, Field: "reward", Msg: "null", Err: errors.New("a cause")}
	for _, err := range []error{
		row,
		limit,
		parquet,
		&DataError{Err: fmt.Errorf("%w (bad row 3, past --max-bad-rows 2)", row)},
		&DataError{Err: errors.New("two identities render the run key run_id=1")},
		&StorageError{Op: "read", URL: "s3://b/x.jsonl", Err: errors.New("403 Forbidden")},
		&StorageError{Op: "read", URL: "s3://b/x.jsonl"},
		Usagef("--protocol x: its decoder has no codec"),
		errors.New("a plain error"),
	} {
		f := carry(err)
		b, jerr := json.Marshal(f)
		if jerr != nil {
			t.Fatal(jerr)
		}
		var back failure
		if jerr := json.Unmarshal(b, &back); jerr != nil {
			t.Fatal(jerr)
		}
		got := back.err()
		if got.Error() != err.Error() {
			t.Errorf("%q came back as %q", err, got)
		}
		var wu, gu *UsageError
		var ws, gs *StorageError
		if errors.As(err, &wu) != errors.As(got, &gu) || errors.As(err, &ws) != errors.As(got, &gs) {
			t.Errorf("%q came back of another kind: %#v", err, got)
		}
		if ws != nil && gs != nil && (ws.Op != gs.Op || ws.URL != gs.URL) {
			t.Errorf("%q came back as the storage error %+v", err, gs)
		}
		var wd, gd *readers.DataError
		if errors.As(err, &wd) != errors.As(got, &gd) {
			t.Errorf("%q: a row error %v, came back %v", err, wd, gd)
		} else if wd != nil && (wd.Line != gd.Line || wd.Row != gd.Row || wd.Field != gd.Field || wd.URL != gd.URL) {
			t.Errorf("%q: the row error %+v came back %+v", err, wd, gd)
		}
		if errors.Is(err, readers.ErrLimit) != errors.Is(got, readers.ErrLimit) {
			t.Errorf("%q: ErrLimit lost or gained", err)
		}
	}
}

// TestCarriable: the data's and the store's errors are carried to Finish;
// a bug's (an InternalError) and a cancelled job's fail the step.
func TestCarriable(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{ctx, &readers.DataError{URL: "x", Line: 1, Msg: "bad"}, true},
		{ctx, &StorageError{Op: "read", URL: "x", Err: errors.New("gone")}, true},
		{ctx, Usagef("bad"), true},
		{ctx, nil, false},
		{ctx, &InternalError{Value: "boom"}, false},
		{ctx, fmt.Errorf("wrapped: %w", &InternalError{Value: "boom"}), false},
		{ctx, context.Canceled, false},
		{ctx, fmt.Errorf("read: %w", context.DeadlineExceeded), false},
		{cancelled, &readers.DataError{URL: "x", Line: 1, Msg: "bad"}, false},
	} {
		if got := carriable(c.ctx, c.err); got != c.want {
			t.Errorf("carriable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
