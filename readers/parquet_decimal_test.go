package readers

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

func bigInt(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not an integer: %s", s)
	}
	return n
}

// TestDecodeParquetDecimals: a decimal column (what DuckDB writes for
// 0.5 or a CAST to DECIMAL, Spark and pandas for Decimal values) is a
// number column: each cell reads as the JSON number of its exact decimal
// text, so the Parquet object gives what the JSON Lines object of the same
// rows gives, in a protocol field (reward, step, a component) and in an
// extra, a fractional step the same error. It was refused as a type "which has no JSON value" (exit 1).
func TestDecodeParquetDecimals(t *testing.T) {
	cases := []struct {
		name  string
		col   string
		typ   arrow.DataType
		cells []string // unscaled integers
		jsonl []string // the rows' cell, as the JSON Lines object would hold it
	}{
		{"reward decimal(18,6)", "reward", &arrow.Decimal128Type{Precision: 18, Scale: 6},
			[]string{"16979", "-500000", "0", "1"}, []string{"0.016979", "-0.500000", "0.000000", "0.000001"}},
		{"reward decimal(38,10)", "reward", &arrow.Decimal128Type{Precision: 38, Scale: 10},
			[]string{"12345678901234567890123456789", "-99999999999999999999999999999999999999", "7", "10"},
			[]string{"1234567890123456789.0123456789", "-9999999999999999999999999999.9999999999", "0.0000000007", "0.0000000010"}},
		{"reward decimal(3,0)", "reward", &arrow.Decimal128Type{Precision: 3, Scale: 0},
			[]string{"999", "-1", "0", "5"}, []string{"999", "-1", "0", "5"}},
		{"reward decimal256(60,30)", "reward", &arrow.Decimal256Type{Precision: 60, Scale: 30},
			[]string{"123456789012345678901234567890123456789012345678901234567890", "-1", "0", "25"},
			[]string{"123456789012345678901234567890.123456789012345678901234567890", "-0.000000000000000000000000000001", "0.000000000000000000000000000000", "0.000000000000000000000000000025"}},
		{"step decimal(10,0)", "step", &arrow.Decimal128Type{Precision: 10, Scale: 0},
			[]string{"0", "1", "2", "3"}, []string{"0", "1", "2", "3"}},
		{"step decimal(10,2)", "step", &arrow.Decimal128Type{Precision: 10, Scale: 2},
			[]string{"0", "100", "250", "300"}, []string{"0.00", "1.00", "2.50", "3.00"}},
		{"component decimal(9,3)", "components", arrow.StructOf(arrow.Field{Name: "progress", Type: &arrow.Decimal128Type{Precision: 9, Scale: 3}, Nullable: true}),
			[]string{"1500", "-2", "0", "1"}, []string{`{"progress":1.500}`, `{"progress":-0.002}`, `{"progress":0.000}`, `{"progress":0.001}`}},
		{"extra decimal(5,5)", "lr", &arrow.Decimal128Type{Precision: 5, Scale: 5},
			[]string{"1", "1", "1", "1"}, []string{"0.00001", "0.00001", "0.00001", "0.00001"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fields := []arrow.Field{{Name: "run_id", Type: arrow.BinaryTypes.String}, {Name: "regime_id", Type: arrow.BinaryTypes.String}}
			if c.col != "reward" {
				fields = append(fields, arrow.Field{Name: "reward", Type: arrow.PrimitiveTypes.Float64})
			}
			fields = append(fields, arrow.Field{Name: c.col, Type: c.typ, Nullable: true})
			schema := arrow.NewSchema(fields, nil)
			data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				for range c.cells {
					b.Field(0).(*array.StringBuilder).Append("a")
					b.Field(1).(*array.StringBuilder).Append("r")
					if c.col != "reward" {
						b.Field(2).(*array.Float64Builder).Append(0.25)
					}
				}
				fb := b.Field(len(fields) - 1)
				if sb, ok := fb.(*array.StructBuilder); ok {
					for _, s := range c.cells {
						sb.Append(true)
						sb.FieldBuilder(0).(*array.Decimal128Builder).Append(decimal128.FromBigInt(bigInt(t, s)))
					}
					return
				}
				for _, s := range c.cells {
					switch fb := fb.(type) {
					case *array.Decimal128Builder:
						fb.Append(decimal128.FromBigInt(bigInt(t, s)))
					case *array.Decimal256Builder:
						fb.Append(decimal256.FromBigInt(bigInt(t, s)))
					default:
						t.Fatalf("builder %T", fb)
					}
				}
			})
			var jsonl strings.Builder
			for _, v := range c.jsonl {
				if c.col == "reward" {
					fmt.Fprintf(&jsonl, `{"run_id":"a","regime_id":"r","reward":%s}`+"\n", v)
				} else {
					fmt.Fprintf(&jsonl, `{"run_id":"a","regime_id":"r","reward":0.25,%q:%s}`+"\n", c.col, v)
				}
			}
			opts := Options{Components: []string{"progress"}}
			url := fmt.Sprintf("mem://b/decimal-%d.parquet", i)
			want, werr := DecodeObject(url, "x.parquet", strings.NewReader(jsonl.String()), opts)
			got, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
			if werr != nil { // the same bad row
				if err == nil || err.Error() != werr.Error() {
					t.Fatalf("the Parquet object: %v, want %v", err, werr)
				}
				return
			}
			if err != nil {
				t.Fatalf("the Parquet object: %v", err)
			}
			sameEncoding(t, c.name, got, want)
			gt, gerr := Assemble([]*ObjectRuns{got}, opts)
			wt, werr := Assemble([]*ObjectRuns{want}, opts)
			if gerr != nil || werr != nil || len(gt) != 1 || len(wt) != 1 {
				t.Fatalf("assembling: %v, %v", gerr, werr)
			}
			for r := range wt[0].Rewards {
				if math.Float64bits(gt[0].Rewards[r]) != math.Float64bits(wt[0].Rewards[r]) {
					t.Fatalf("row %d: reward %v, want %v", r+1, gt[0].Rewards[r], wt[0].Rewards[r])
				}
			}
			if fmt.Sprint(gt[0].Meta) != fmt.Sprint(wt[0].Meta) {
				t.Fatalf("metadata %v, want %v", gt[0].Meta, wt[0].Meta)
			}
		})
	}
}

// TestDecimalScaleOutsidePrecision: a decimal type whose scale lies outside
// 0 to its precision (which Parquet forbids: only a damaged or hand-forged
// footer says so) is not a number column, so no cell is written as that
// many digits.
func TestDecimalScaleOutsidePrecision(t *testing.T) {
	for _, typ := range []arrow.DataType{
		&arrow.Decimal128Type{Precision: 5, Scale: 7},
		&arrow.Decimal128Type{Precision: 5, Scale: -1},
		&arrow.Decimal256Type{Precision: 40, Scale: 1 << 30},
	} {
		if isNumberType(typ) || checkJSONType(typ, nil) == nil {
			t.Errorf("%s: read as a number column", typ)
		}
	}
	for _, typ := range []arrow.DataType{&arrow.Decimal128Type{Precision: 5, Scale: 5}, &arrow.Decimal256Type{Precision: 76, Scale: 0}} {
		if !isNumberType(typ) || checkJSONType(typ, nil) != nil {
			t.Errorf("%s: not read as a number column", typ)
		}
	}
}
