package skillshift

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
)

// Status is the outcome of an identity check.
type Status string

// Outcomes of an identity check.
const (
	StatusPass    Status = "pass"
	StatusFail    Status = "fail"
	StatusSkipped Status = "skipped"
)

// Identity is the check mean(websites) = mean(conditions) = O/A of one
// metric.
type Identity struct {
	Status Status
	// Reason says why the check was skipped or, for a check of only two of
	// the three means, which one could not be formed and why.
	Reason string
	// Websites is the mean of the website marginals, Conditions the mean of
	// the condition marginals, Overall the O/A; each absent when it cannot
	// be formed.
	Websites, Conditions, Overall protocol.Value
	// The same, rounded half-up to two decimals ("35.29"); "" when absent.
	WebsitesRounded, ConditionsRounded, OverallRounded string
}

// Round2 rounds x half-up (ties away from zero) to two decimals in decimal
// arithmetic on x's shortest decimal representation, and renders the result
// with exactly two decimals: Round2(0.125) = "0.13", Round2(2.675) = "2.68"
// (the float64 nearest 2.675 is 2.67499999…, but its shortest representation
// is "2.675"), Round2(16.9) = "16.90". x must be finite.
func Round2(x float64) string {
	return formatHundredths(hundredths(x))
}

// hundredths returns x rounded half-up to an integer number of hundredths,
// computed exactly on the decimal string strconv.FormatFloat(x, 'g', -1, 64).
func hundredths(x float64) *big.Int {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		panic(fmt.Sprintf("skillshift: rounding %v, which is not finite", x))
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		panic(fmt.Sprintf("skillshift: cannot read %v as a decimal", x))
	}
	r.Mul(r, big.NewRat(100, 1))
	num := new(big.Int).Abs(r.Num())
	q, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if rem.Lsh(rem, 1).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if r.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

func formatHundredths(h *big.Int) string {
	neg := h.Sign() < 0
	s := new(big.Int).Abs(h).String()
	for len(s) < 3 {
		s = "0" + s
	}
	s = s[:len(s)-2] + "." + s[len(s)-2:]
	if neg {
		s = "-" + s
	}
	return s
}

// largeMean is the magnitude from which Summary prints a mean, for a
// person, in scientific notation with four decimals (an AS or ASC is
// unbounded: 1e300 would be 301 digits): the report's rule (writers.Large,
// writers.FormatScaled; docs/decisions.md "Numbers printed for a person").
// The rounded strings of Identity stay exact.
const largeMean = 1e6

// meanNames name the three means in messages.
var meanNames = [3]string{"mean(websites)", "mean(conditions)", "overall"}

// compare runs the check on whichever of the three means are present: it
// passes when every two present means, rounded to hundredths, differ by at
// most one hundredth. With fewer than two present it is skipped. why[i] says
// why mean i is absent.
func compare(means [3]protocol.Value, why [3]string) Identity {
	id := Identity{Websites: means[0], Conditions: means[1], Overall: means[2]}
	var h [3]*big.Int
	var missing []string
	n := 0
	for i, m := range means {
		if !m.OK {
			missing = append(missing, meanNames[i]+": "+why[i])
			continue
		}
		h[i] = hundredths(m.V)
		n++
	}
	round := func(i int) string {
		if h[i] == nil {
			return ""
		}
		return formatHundredths(h[i])
	}
	id.WebsitesRounded, id.ConditionsRounded, id.OverallRounded = round(0), round(1), round(2)
	if n < 2 {
		id.Status = StatusSkipped
		id.Reason = strings.Join(missing, "; ")
		return id
	}
	id.Status = StatusPass
	one := big.NewInt(1)
	d := new(big.Int)
	for i := 0; i < 3; i++ {
		for j := i + 1; j < 3; j++ {
			if h[i] == nil || h[j] == nil {
				continue
			}
			if d.Sub(h[i], h[j]).Abs(d).Cmp(one) > 0 {
				id.Status = StatusFail
			}
		}
	}
	if len(missing) > 0 {
		id.Reason = "not checked: " + strings.Join(missing, "; ")
	}
	return id
}

func skipped(reason string) Identity {
	none := protocol.None(reason)
	return Identity{Status: StatusSkipped, Reason: reason, Websites: none, Conditions: none, Overall: none}
}

// Summary renders the check on one line (without the metric name):
//
//	pass  mean(websites) 35.29  mean(conditions) 35.28  overall 35.29
//	fail  mean(websites) 23.29  mean(conditions) 35.28  overall 35.29 (differ by more than 0.01)
//	skipped: no task carries skill_calls: the method records no skill invocations
//
// A mean of magnitude 1e6 or more prints as the report prints it
// (1.0000e+300), not in its hundredths.
func (id Identity) Summary() string {
	if id.Status == StatusSkipped {
		return string(StatusSkipped) + ": " + id.Reason
	}
	var b strings.Builder
	b.WriteString(string(id.Status))
	means := [3]protocol.Value{id.Websites, id.Conditions, id.Overall}
	for i, s := range [3]string{id.WebsitesRounded, id.ConditionsRounded, id.OverallRounded} {
		if s == "" {
			s = "--"
		} else if v := means[i].V; math.Abs(v) >= largeMean {
			s = strconv.FormatFloat(v, 'e', 4, 64)
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				s = strconv.FormatFloat(v, 'e', -1, 64) // 1.7977e+308 reads back as +Inf
			}
		}
		b.WriteString("  " + meanNames[i] + " " + s)
	}
	if id.Status == StatusFail {
		b.WriteString(" (differ by more than 0.01)")
	}
	if id.Reason != "" {
		b.WriteString("; " + id.Reason)
	}
	return b.String()
}
