package decodecand

import (
	"errors"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/minio/simdjson-go"
)

// tapeWalker reads simdjson-go's tape of one row into a skyfall.Row.
type tapeWalker struct {
	builder *skyfall.Builder
	row_    skyfall.Row
	obj     simdjson.Object
	sub     simdjson.Object
	val     simdjson.Iter
	cv      simdjson.Iter
	labels  map[string]string
	rows    int
	sink    float64
}

func newTapeWalker() *tapeWalker {
	w := &tapeWalker{labels: map[string]string{}}
	w.row_.Comps = make([]float64, len(comps))
	return w
}

func (w *tapeWalker) intern(b []byte) string {
	if s, ok := w.labels[string(b)]; ok {
		return s
	}
	s := string(b)
	w.labels[s] = s
	return s
}

var errShape = errors.New("row: unexpected type")

func (w *tapeWalker) row(it simdjson.Iter) error {
	r := &w.row_
	c := r.Comps
	clear(c)
	*r = skyfall.Row{Comps: c, Invalid: -1}
	obj, err := it.Object(&w.obj)
	if err != nil {
		return err
	}
	for {
		name, t, err := obj.NextElementBytes(&w.val)
		if err != nil {
			return err
		}
		if t == simdjson.TypeNone {
			break
		}
		v := &w.val
		switch string(name) {
		case "reward":
			if r.Reward, err = v.Float(); err != nil {
				return err
			}
		case "regime_id":
			s, err := v.StringBytes()
			if err != nil {
				return err
			}
			r.Label = w.intern(s)
		case "regime_origin", "alias_of":
			if t == simdjson.TypeNull {
				continue
			}
			s, err := v.StringBytes()
			if err != nil {
				return err
			}
			if name[0] == 'r' {
				r.Origin, r.HasOrigin = w.intern(s), true
			} else {
				r.AliasOf, r.HasAliasOf = w.intern(s), true
			}
		case "step":
			if t == simdjson.TypeNull {
				continue
			}
			if r.Step, err = v.Int(); err != nil {
				return err
			}
			r.HasStep = true
		case "components":
			if t == simdjson.TypeNull {
				continue
			}
			sub, err := v.Object(&w.sub)
			if err != nil {
				return err
			}
			for {
				k, ct, err := sub.NextElementBytes(&w.cv)
				if err != nil {
					return err
				}
				if ct == simdjson.TypeNone {
					break
				}
				f, err := w.cv.Float()
				if err != nil {
					return err
				}
				for i, name := range comps {
					if name == string(k) {
						c[i] = f
					}
				}
			}
		case "invalid_action":
			if t == simdjson.TypeNull {
				continue
			}
			bv, err := v.Bool()
			if err != nil {
				return err
			}
			r.Invalid = 0
			if bv {
				r.Invalid = 1
			}
		case "effective_rank":
			if t == simdjson.TypeNull {
				continue
			}
			if r.EffRank, err = v.Float(); err != nil {
				return err
			}
			r.HasEffRank = true
		case "gamma":
			if r.Gamma, err = v.Float(); err != nil {
				return err
			}
			r.HasGamma = true
		default:
			// Every other top-level value read once, as the metadata
			// candidates would.
			switch t {
			case simdjson.TypeString:
				s, err := v.StringBytes()
				if err != nil {
					return err
				}
				w.sink += float64(len(s))
			case simdjson.TypeFloat, simdjson.TypeInt, simdjson.TypeUint:
				f, err := v.Float()
				if err != nil {
					return err
				}
				w.sink += f
			}
		}
	}
	w.builder.Add(r)
	w.rows++
	return nil
}
