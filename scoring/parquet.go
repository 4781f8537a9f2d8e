package scoring

import (
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/crlbatch/crlbatch/readers"
)

// ParquetDecoder is implemented by decoders that read a Parquet trace
// object's columns directly (readers.DecodeParquet), with exactly the
// result Decode gives for the same rows as JSON Lines (readers.ParquetLines):
// the same object, errors naming rows by number, bad rows and limits. r is
// the object, read at the offsets its footer gives; fields are the
// protocol's row fields. The engine reads a Parquet object of a decoder
// without it through ParquetLines and Decode.
type ParquetDecoder interface {
	DecodeParquet(url, key string, r parquet.ReaderAtSeeker, fields []readers.ParquetField, onBad readers.BadRowFunc) (Object, error)
}
