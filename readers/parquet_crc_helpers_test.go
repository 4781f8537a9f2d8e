package readers

import "testing"

// pqWithCRCs returns the Parquet file data with the crc field of each page
// header set as crc says (pqSetCRCs).
func pqWithCRCs(t testing.TB, data []byte, crc pqCRCPage) []byte {
	t.Helper()
	out, err := pqSetCRCs(data, crc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pqWithoutCRCs returns the Parquet file data with no crc in any page
// header (crlbatch convert's files have one in every header).
func pqWithoutCRCs(t testing.TB, data []byte) []byte {
	t.Helper()
	return pqWithCRCs(t, data, func(int, int, int, uint32) (uint32, bool) { return 0, false })
}
