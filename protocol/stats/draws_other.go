//go:build !amd64

package stats

// haveAVX512 is false off amd64: the refill is pcgRefillGo's.
var haveAVX512 = false

// refill computes the next drawBlock outputs into buf and rewinds pos.
func (d *drawStream) refill() {
	pcgRefillGo(&d.lanes, &d.buf)
	d.pos = 0
}
