package safecrl

import "fmt"

// DefaultWindowEpisodes is W, the episodes every window of PROTOCOLS 3 asks
// for.
const DefaultWindowEpisodes = 20

// Params are the scoring parameters of PROTOCOLS 3. Start from DefaultParams
// and change what differs.
type Params struct {
	// WindowEpisodes is W (--window-episodes): the episodes averaged by
	// final_task_reward, success_rate and each side of a forgetting
	// difference. It must be at least 1.
	WindowEpisodes int
}

// DefaultParams returns the defaults of PROTOCOLS 3.
func DefaultParams() Params {
	return Params{WindowEpisodes: DefaultWindowEpisodes}
}

// Check reports parameters outside their domain.
func (p *Params) Check() error {
	if p.WindowEpisodes < 1 {
		return fmt.Errorf("window episodes %d: want ≥ 1", p.WindowEpisodes)
	}
	return nil
}
