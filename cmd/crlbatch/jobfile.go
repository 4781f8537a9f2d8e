package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"
	"go.yaml.in/yaml/v3"

	"github.com/crlbatch/crlbatch/pipeline"
)

// applyJobFile reads --config, a YAML mapping of flag names to values, and
// sets every flag the command line left unset. The key `input` gives INPUT.
// Unknown keys, the key `config` and values of the wrong shape are usage
// errors naming the file and the key.
func applyJobFile(cmd *cli.Command) (input string, err error) {
	file := cmd.String("config")
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", pipeline.Usagef("--config: %v", err)
	}
	entries, err := parseJobFile(file, data)
	if err != nil {
		return "", err
	}
	known := map[string]bool{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	for _, e := range entries {
		for _, v := range e.values {
			if (v == "~" || strings.HasPrefix(v, "~/")) && takesPath(cmd, e.key) {
				// YAML is read by no shell: the path would name a folder
				// "~" under the working directory.
				return "", pipeline.Usagef("%s: line %d: %s %q: ~ is not expanded in a job file (no shell reads it): write the path in full", file, e.line, e.key, v)
			}
		}
		switch {
		case e.key == "input":
			if len(e.values) != 1 {
				return "", pipeline.Usagef("%s: line %d: input: want one location", file, e.line)
			}
			input = e.values[0]
			continue
		case e.key == "config" || e.key == "help":
			return "", pipeline.Usagef("%s: line %d: %q cannot be set from a job file", file, e.line, e.key)
		case !known[e.key]:
			var names []string
			for n := range known {
				if len(n) > 1 {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			return "", pipeline.Usagef("%s: line %d: unknown key %q%s (keys are the flag names of crlbatch %s)", file, e.line, e.key, didYouMean(e.key, names, ""), cmd.Name)
		}
		if cmd.IsSet(e.key) {
			continue // the command line wins
		}
		if len(e.values) != 1 && !isSliceFlag(cmd, e.key) {
			return "", pipeline.Usagef("%s: line %d: %s takes one value, got %d", file, e.line, e.key, len(e.values))
		}
		for _, v := range e.values {
			if err := cmd.Set(e.key, v); err != nil {
				if w := wants(cmd, e.key); w != "" {
					return "", pipeline.Usagef("%s: line %d: %s %q: %s", file, e.line, e.key, v, w)
				}
				return "", pipeline.Usagef("%s: line %d: %s: %v", file, e.line, e.key, err)
			}
		}
	}
	return input, nil
}

type jobEntry struct {
	key    string
	line   int
	values []string
}

// parseJobFile decodes a job file strictly: one YAML mapping of scalars or
// lists of scalars, no repeated key, no second document.
func parseJobFile(file string, data []byte) ([]jobEntry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, pipeline.Usagef("%s: %v", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, pipeline.Usagef("%s: a job file holds one YAML document", file)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, pipeline.Usagef("%s: line %d: want a mapping of flag names to values", file, m.Line)
	}
	seen := map[string]int{}
	var out []jobEntry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, pipeline.Usagef("%s: line %d: a key must be a flag name", file, k.Line)
		}
		if prev, dup := seen[k.Value]; dup {
			return nil, pipeline.Usagef("%s: line %d: key %q repeated (first on line %d)", file, k.Line, k.Value, prev)
		}
		seen[k.Value] = k.Line
		e := jobEntry{key: k.Value, line: k.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				return nil, pipeline.Usagef("%s: line %d: %s: no value", file, v.Line, k.Value)
			}
			e.values = []string{v.Value}
		case yaml.SequenceNode:
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
					return nil, pipeline.Usagef("%s: line %d: %s: list items must be plain values", file, it.Line, k.Value)
				}
				e.values = append(e.values, it.Value)
			}
		default:
			return nil, pipeline.Usagef("%s: line %d: %s: want a value or a list of values", file, v.Line, k.Value)
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out, nil
}

// takesPath reports whether the job file's key names a path or location:
// input, out, or a flag that takes a file (spec, bound-map, reference,
// cache, spill-dir). Other values, a family named "~", are left alone.
func takesPath(cmd *cli.Command, name string) bool {
	if name == "input" || name == "out" {
		return true
	}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			switch f := f.(type) {
			case *cli.StringFlag:
				return f.TakesFile
			case *cli.StringSliceFlag:
				return f.TakesFile
			}
			return false
		}
	}
	return false
}

// isSliceFlag reports whether the named flag may be given several times.
func isSliceFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, ok := f.(*cli.StringSliceFlag)
				return ok
			}
		}
	}
	return false
}
