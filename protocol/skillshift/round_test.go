package skillshift

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

func TestRound2(t *testing.T) {
	cases := []struct {
		x    float64
		want string
	}{
		{0.125, "0.13"}, // exactly representable tie: half-up
		{0.135, "0.14"}, // float64 0.13500000000000000888…, shortest form "0.135"
		{2.675, "2.68"}, // float64 2.67499999999999982236…, shortest form "2.675": a tie, up
		{1.005, "1.01"}, // float64 1.00499999999999989342…, shortest form "1.005"
		{8.345, "8.35"}, // float64 8.34500000000000063948…, above the tie either way
		{0.005, "0.01"}, // ties go up from zero too
		{0.0049999999999999, "0.00"},
		{35.285, "35.29"},
		{35.28666666666667, "35.29"},
		{35.28333333333333, "35.28"},
		{16.9, "16.90"}, // always two decimals
		{100, "100.00"},
		{0, "0.00"},
		{-0.125, "-0.13"}, // half-up is away from zero, as Python's ROUND_HALF_UP
		{-0.001, "0.00"},  // no negative zero
		{1e22, "10000000000000000000000.00"},
		{5e-324, "0.00"},
		{0.1 + 0.2, "0.30"}, // 0.30000000000000004
	}
	for _, c := range cases {
		if got := Round2(c.x); got != c.want {
			t.Errorf("Round2(%v) = %s, want %s", c.x, got, c.want)
		}
	}
}

// TestRound2IsDecimalNotFloat documents the choice for 2.675: its float64
// lies below 2.675, so rounding its exact binary value (%.2f, Python's
// round(x, 2)) gives 2.67, while the protocol rounds the shortest representation, "2.675",
// which is a tie and goes up to 2.68.
func TestRound2IsDecimalNotFloat(t *testing.T) {
	exact := new(big.Float).SetPrec(200).SetFloat64(2.675)
	tie, _ := new(big.Float).SetPrec(200).SetString("2.675")
	if exact.Cmp(tie) >= 0 {
		t.Fatal("float64(2.675) is not below 2.675")
	}
	// strconv and fmt round the exact binary value: 2.67.
	if got := strconv.FormatFloat(2.675, 'f', 2, 64); got != "2.67" {
		t.Fatalf("binary rounding gives %s", got)
	}
	if Round2(2.675) != "2.68" {
		t.Errorf("Round2(2.675) = %s", Round2(2.675))
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		a, b, c float64
		want    Status
	}{
		{35.28666, 35.28333, 35.29, StatusPass},     // 35.29, 35.28, 35.29
		{35.275, 35.285, 35.29, StatusPass},         // 35.28, 35.29, 35.29
		{35.27, 35.29, 35.28, StatusFail},           // 35.27 and 35.29 differ by two hundredths
		{35.2749999, 35.2849999, 35.28, StatusPass}, // 35.27, 35.28, 35.28
		{35.2749999, 35.2850000, 35.28, StatusFail}, // 35.27 vs 35.29
	}
	for _, c := range cases {
		id := compare([3]protocol.Value{protocol.Some(c.a), protocol.Some(c.b), protocol.Some(c.c)}, [3]string{})
		if id.Status != c.want {
			t.Errorf("%v %v %v: %s", c.a, c.b, c.c, id.Summary())
		}
	}
	// Two present means are compared, one is not enough.
	id := compare([3]protocol.Value{protocol.None("x"), protocol.Some(1), protocol.Some(1.004)}, [3]string{"why", "", ""})
	if id.Status != StatusPass || id.Reason != "not checked: mean(websites): why" || id.WebsitesRounded != "" {
		t.Errorf("partial: %+v", id)
	}
	id = compare([3]protocol.Value{protocol.None("x"), protocol.None("y"), protocol.Some(1)}, [3]string{"a", "b", ""})
	if id.Status != StatusSkipped || id.Reason != "mean(websites): a; mean(conditions): b" {
		t.Errorf("one mean: %+v", id)
	}
}
