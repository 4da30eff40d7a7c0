// Package msg holds the typed bodies of Slurm 22.05 messages and their
// codecs, one file per entity (node, partition, config, job, ...). Each file
// adds its codecs to the registry from an init function, so entities can be
// added without touching a central list.
package msg

import "github.com/goslurm/goslurm/protocol/codec"

// registrars add the codecs of one entity to a registry.
var registrars []func(*codec.Registry)

// Registry returns a new registry holding codec.DefaultRegistry's bodies and
// every typed body of this package.
func Registry() *codec.Registry {
	g := codec.DefaultRegistry()
	for _, add := range registrars {
		add(g)
	}
	return g
}
