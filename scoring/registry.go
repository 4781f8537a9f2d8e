package scoring

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

var (
	regMu    sync.RWMutex
	registry = map[string]Protocol{}
	// defaultName is the protocol registered as the default, noted once:
	// a description is built anew by every Describe call, and Protocols
	// and Default are called several times while the command line is
	// built, on every start (asking every comparison of their sort for two
	// descriptions cost each start ~1.5 ms).
	defaultName string
)

// Register makes a protocol available under its name. It is meant to be
// called from the init function of the protocol's package; registering two
// protocols under one name, an empty name, or two defaults panics.
func Register(p Protocol) {
	regMu.Lock()
	defer regMu.Unlock()
	name := p.Name()
	if name == "" || strings.ContainsAny(name, " ,|") {
		panic(fmt.Sprintf("scoring: Register: bad protocol name %q", name))
	}
	if _, dup := registry[name]; dup {
		panic("scoring: Register: protocol " + name + " registered twice")
	}
	if p.Describe().Default {
		if defaultName != "" {
			panic("scoring: Register: " + name + " and " + defaultName + " both claim to be the default protocol")
		}
		defaultName = name
	}
	registry[name] = p
}

// Lookup returns the protocol registered under name.
func Lookup(name string) (Protocol, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	if p, ok := registry[name]; ok {
		return p, nil
	}
	return nil, Usagef("--protocol %q: want %s", name, choices())
}

// Protocols lists the registered protocols: the default first, then the
// others by name.
func Protocols() []Protocol {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Protocol, 0, len(registry))
	for _, p := range registry {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := out[i].Name() == defaultName, out[j].Name() == defaultName
		if di != dj {
			return di
		}
		return out[i].Name() < out[j].Name()
	})
	return out
}

// Default returns the name of the default protocol ("" when none is
// registered as such).
func Default() string {
	regMu.RLock()
	defer regMu.RUnlock()
	return defaultName
}

// choices lists the registered names for a message: "a, b or c".
func choices() string {
	var names []string
	for _, p := range registry {
		names = append(names, p.Name())
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		return "a registered protocol (none is)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
