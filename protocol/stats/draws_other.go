//go:build !amd64

package stats

// haveAVX512 is false off amd64: the refill is pcgRefillGo's.
var haveAVX512 = false

// refill computes the next drawBlock outputs into buf and rewinds pos.
func (d *drawStream) refill() {
	pcgRefillGo(&d.lanes, &d.buf)
	d.pos = 0
}

// gatherPositions takes none of outs off amd64: drawPositions' Go loop
// draws them all.
func gatherPositions[T int32 | uint64](outs []uint64, pos, out []T) int { return 0 }
