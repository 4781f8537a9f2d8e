package scoring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
)

// AppendExact appends the exact bits of v (the value a pointer points to
// is written, not the pointer) to buf: every field of a struct in order
// (fields of function type are left out: they are no data), a float's
// IEEE bits (-0, NaN and every last bit survive), a pointer's, a slice's
// and a map's nil-ness and contents (a map's entries by sorted key), a
// string's bytes. It refuses a kind it does not know (interfaces,
// channels, maps keyed by other than strings) rather than leave it out, so
// that a field added later to a type it encodes is either written or an
// error, never silently dropped. DecodeExact reads it back.
func AppendExact(buf []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("scoring: AppendExact of a nil %T", v)
		}
		rv = rv.Elem()
	}
	return appendExact(buf, rv)
}

// DecodeExact reads what AppendExact wrote of a value of ptr's element
// type into *ptr; the whole of data must be that value.
func DecodeExact(data []byte, ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("scoring: DecodeExact into %T, not a pointer", ptr)
	}
	rest, err := decodeExact(data, v.Elem())
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("scoring: %d bytes after the value", len(rest))
	}
	return nil
}

func appendExact(buf []byte, v reflect.Value) ([]byte, error) {
	var err error
	switch v.Kind() {
	case reflect.String:
		buf = binary.AppendUvarint(buf, uint64(v.Len()))
		return append(buf, v.String()...), nil
	case reflect.Bool:
		if v.Bool() {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(buf, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(buf, v.Uint()), nil
	case reflect.Float64:
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float())), nil
	case reflect.Float32:
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v.Float()))), nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(buf, 0), nil
		}
		return appendExact(append(buf, 1), v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return append(buf, 0), nil
		}
		buf = binary.AppendUvarint(append(buf, 1), uint64(v.Len()))
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(buf, v.Bytes()...), nil
		}
		for i := range v.Len() {
			if buf, err = appendExact(buf, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("scoring: cannot encode a %s exactly (keys not strings)", v.Type())
		}
		if v.IsNil() {
			return append(buf, 0), nil
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		buf = binary.AppendUvarint(append(buf, 1), uint64(len(keys)))
		for _, k := range keys {
			buf = binary.AppendUvarint(buf, uint64(len(k)))
			buf = append(buf, k...)
			kv := reflect.New(v.Type().Key()).Elem()
			kv.SetString(k)
			if buf, err = appendExact(buf, v.MapIndex(kv)); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).Kind() == reflect.Func {
				continue
			}
			if buf, err = appendExact(buf, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, fmt.Errorf("scoring: cannot encode a %s (%s) exactly", v.Type(), v.Kind())
}

var errShortExact = errors.New("scoring: an exact encoding ends early or is damaged")

func decodeExact(data []byte, v reflect.Value) ([]byte, error) {
	uvarint := func() (uint64, bool) {
		x, n := binary.Uvarint(data)
		if n <= 0 {
			return 0, false
		}
		data = data[n:]
		return x, true
	}
	flag := func() (bool, bool) { // present, ok
		if len(data) < 1 || data[0] > 1 {
			return false, false
		}
		p := data[0] == 1
		data = data[1:]
		return p, true
	}
	switch v.Kind() {
	case reflect.String:
		n, ok := uvarint()
		if !ok || uint64(len(data)) < n {
			return nil, errShortExact
		}
		v.SetString(string(data[:n]))
		return data[n:], nil
	case reflect.Bool:
		b, ok := flag()
		if !ok {
			return nil, errShortExact
		}
		v.SetBool(b)
		return data, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, n := binary.Varint(data)
		if n <= 0 || v.OverflowInt(x) {
			return nil, errShortExact
		}
		v.SetInt(x)
		return data[n:], nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, ok := uvarint()
		if !ok || v.OverflowUint(x) {
			return nil, errShortExact
		}
		v.SetUint(x)
		return data, nil
	case reflect.Float64:
		if len(data) < 8 {
			return nil, errShortExact
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(data)))
		return data[8:], nil
	case reflect.Float32:
		if len(data) < 4 {
			return nil, errShortExact
		}
		v.SetFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(data))))
		return data[4:], nil
	case reflect.Pointer:
		p, ok := flag()
		if !ok {
			return nil, errShortExact
		}
		if !p {
			v.SetZero()
			return data, nil
		}
		e := reflect.New(v.Type().Elem())
		rest, err := decodeExact(data, e.Elem())
		if err != nil {
			return nil, err
		}
		v.Set(e)
		return rest, nil
	case reflect.Slice:
		p, ok := flag()
		if !ok {
			return nil, errShortExact
		}
		if !p {
			v.SetZero()
			return data, nil
		}
		n, ok := uvarint()
		if !ok || n > uint64(len(data)) { // every element takes a byte at least
			return nil, errShortExact
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(append([]byte{}, data[:n]...))
			return data[n:], nil
		}
		s := reflect.MakeSlice(v.Type(), int(n), int(n))
		var err error
		for i := range int(n) {
			if data, err = decodeExact(data, s.Index(i)); err != nil {
				return nil, err
			}
		}
		v.Set(s)
		return data, nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("scoring: cannot decode a %s (keys not strings)", v.Type())
		}
		p, ok := flag()
		if !ok {
			return nil, errShortExact
		}
		if !p {
			v.SetZero()
			return data, nil
		}
		n, ok := uvarint()
		if !ok || n > uint64(len(data)) {
			return nil, errShortExact
		}
		m := reflect.MakeMapWithSize(v.Type(), int(n))
		var err error
		for range int(n) {
			k := reflect.New(v.Type().Key()).Elem()
			if data, err = decodeExact(data, k); err != nil {
				return nil, err
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if data, err = decodeExact(data, e); err != nil {
				return nil, err
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
		return data, nil
	case reflect.Struct:
		var err error
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() == reflect.Func {
				continue
			}
			if !f.CanSet() {
				return nil, fmt.Errorf("scoring: cannot decode %s's unexported field %s", v.Type(), v.Type().Field(i).Name)
			}
			if data, err = decodeExact(data, f); err != nil {
				return nil, err
			}
		}
		return data, nil
	}
	return nil, fmt.Errorf("scoring: cannot decode a %s (%s)", v.Type(), v.Kind())
}
