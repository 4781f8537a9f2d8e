package scoring

// Codec is implemented by decoders whose decoded objects can be written to
// bytes and read back exactly: the runs Assemble builds from objects read
// back are the runs it builds from the objects decoded (keys, metadata,
// rows, float64 bits, the lines errors name). The cache of --cache stores
// the encodings, and an engine that moves decoded objects between workers
// (Apache Beam) can ship them.
type Codec interface {
	// CodecKey names everything the decoder's objects depend on besides
	// the object's bytes, key and URL: the protocol, the encoding's
	// version and every option that changes decoding (identity fields,
	// limits, components). Two decoders with one CodecKey decode every
	// object alike, so an encoding made by one can stand for the other's
	// Decode.
	CodecKey() string
	// AppendEncoding appends the encoding of o, an object this decoder's
	// Decode returned, to buf, before o is spilled or released.
	AppendEncoding(buf []byte, o Object) ([]byte, error)
	// DecodeEncoding reads back an encoding AppendEncoding made, as the
	// object at url with key (relative to the input): what Decode gave.
	// An encoding it cannot read (damaged, another version, another
	// decoder's) is an error.
	DecodeEncoding(url, key string, data []byte) (Object, error)
}
