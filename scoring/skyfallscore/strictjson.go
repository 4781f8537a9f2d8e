package skyfallscore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// checkStrictJSON reports a repeated key in any object of a JSON document,
// and anything after the document: encoding/json would let the last of two
// keys win silently.
func checkStrictJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkJSON(dec, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON document")
	}
	return nil
}

func walkJSON(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("key %q repeated%s", key, where(path))
			}
			seen[key] = true
			if err := walkJSON(dec, path+"."+key); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkJSON(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path[1:]
}

// readBoundMap reads --bound-map: a JSON object {label: number}; a null, a
// non-number or a repeated label is an error naming the file.
func readBoundMap(file string, data []byte) (map[string]float64, error) {
	if err := checkStrictJSON(data); err != nil {
		return nil, fmt.Errorf("--bound-map %s: %v", file, err)
	}
	var raw map[string]*float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("--bound-map %s: want a JSON object {label: number}: %v", file, err)
	}
	out := make(map[string]float64, len(raw))
	for k, v := range raw {
		if v == nil {
			return nil, fmt.Errorf("--bound-map %s: label %q has no ceiling (null); give a number or leave the label out of the run", file, k)
		}
		out[k] = *v
	}
	return out, nil
}

// readReference reads --reference: a JSON object {run key or run_id:
// [rewards]}; a null reward or a repeated key is an error naming the file.
func readReference(file string, data []byte) (map[string][]float64, error) {
	if err := checkStrictJSON(data); err != nil {
		return nil, fmt.Errorf("--reference %s: %v", file, err)
	}
	var raw map[string][]*float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("--reference %s: want a JSON object {run key: [rewards]}: %v", file, err)
	}
	out := make(map[string][]float64, len(raw))
	for k, rs := range raw {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			if r == nil {
				return nil, fmt.Errorf("--reference %s: run %q: reward %d is null; a reference trajectory needs every reward", file, k, i)
			}
			xs[i] = *r
		}
		out[k] = xs
	}
	return out, nil
}
