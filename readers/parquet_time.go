package readers

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Parquet's DATE, TIME and TIMESTAMP columns (pandas writes its datetime64
// columns as TIMESTAMP, DuckDB infers its DATE, TIME and TIMESTAMP types
// from JSON strings that look like them) have no JSON value of their own:
// a cell reads as a JSON string of its ISO 8601 text, the one form every
// writer's cell of the same value shares:
//
//	date                        "2024-01-05"
//	time of day                 "10:00:00", "10:00:00.123"
//	timestamp, UTC-adjusted     "2024-01-05T10:00:00.123Z" (the instant in UTC, whatever
//	                            zone the file's Arrow schema names)
//	timestamp, local (naive)    "2024-01-05T10:00:00.123"
//
// Seconds carry a fraction only when it is not zero, of as many digits as
// it needs (to the nanosecond), so the same instant reads as the same text
// in a column of any unit. Years are of at least four digits, negative ones
// after a '-'; a time of day outside a day (which Parquet forbids) keeps its
// hours ("25:00:00", "-00:00:01") rather than being taken for another.

// isTemporalType says whether t is a date, a time of day or a timestamp.
func isTemporalType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// appendTemporal appends the JSON string of cell i of a, an array of a
// temporal type (isTemporalType), not null.
func appendTemporal(b []byte, a arrow.Array, i int) []byte {
	b = append(b, '"')
	b = appendTemporalText(b, a, i)
	return append(b, '"')
}

// appendTemporalText appends the text of cell i of a (appendTemporal's
// string, without its quotes).
func appendTemporalText(b []byte, a arrow.Array, i int) []byte {
	switch a := a.(type) {
	case *array.Date32:
		b = appendDate(b, int64(a.Value(i)))
	case *array.Date64:
		b = appendDate(b, floorDiv(int64(a.Value(i)), 86400000))
	case *array.Time32:
		b = appendClock(b, int64(a.Value(i)), a.DataType().(*arrow.Time32Type).Unit)
	case *array.Time64:
		b = appendClock(b, int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit)
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		v, per := int64(a.Value(i)), unitsPerSecond(t.Unit)
		secs := floorDiv(v, per)
		days := floorDiv(secs, 86400)
		b = appendDate(b, days)
		b = append(b, 'T')
		b = appendClock(b, (secs-days*86400)*per+(v-secs*per), t.Unit)
		if t.TimeZone != "" {
			b = append(b, 'Z')
		}
	}
	return b
}

// unitsPerSecond is the number of u in one second.
func unitsPerSecond(u arrow.TimeUnit) int64 { return int64(time.Second / u.Multiplier()) }

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// appendDate appends the proleptic Gregorian date of days since
// 1970-01-01 as YYYY-MM-DD.
func appendDate(b []byte, days int64) []byte {
	// Howard Hinnant's civil_from_days, in 400-year eras of 146,097 days.
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	if y < 0 {
		b = append(b, '-')
		y = -y
	}
	b = appendPadded(b, uint64(y), 4)
	b = append(b, '-')
	b = appendPadded(b, uint64(m), 2)
	b = append(b, '-')
	return appendPadded(b, uint64(d), 2)
}

// appendClock appends v units of u after midnight as HH:MM:SS, with the
// fraction of a second when it is not zero (its trailing zeros left out).
func appendClock(b []byte, v int64, u arrow.TimeUnit) []byte {
	mag := uint64(v)
	if v < 0 {
		b = append(b, '-')
		mag = -mag // two's complement: math.MinInt64's magnitude too
	}
	per := uint64(unitsPerSecond(u))
	secs, frac := mag/per, mag%per
	b = appendPadded(b, secs/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, secs%60, 2)
	if frac == 0 {
		return b
	}
	digits := 0
	for p := per; p > 1; p /= 10 {
		digits++
	}
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	return appendPadded(b, frac, digits)
}

// appendPadded appends v in decimal, with leading zeros to width digits.
func appendPadded(b []byte, v uint64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	for n := len(buf) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, buf[i:]...)
}
