package contilab

import (
	"fmt"
	"strings"
)

// MatrixEntry is one cell R_ij of the accuracy matrix: the test accuracy on
// task EvalTask after training task AfterTask (a "matrix" row).
type MatrixEntry struct {
	AfterTask int
	EvalTask  int
	Acc       float64
}

// InitialEntry is b_j, the accuracy of the untrained model on task EvalTask
// (an "initial" row).
type InitialEntry struct {
	EvalTask int
	Acc      float64
}

// JointEntry is a*_j, the accuracy on task EvalTask of the Joint run of the
// same preset and seed (a "joint" row).
type JointEntry struct {
	EvalTask int
	Acc      float64
}

// StreamPoint is one continual-evaluation sample A(k, n): the accuracy on
// task EvalTask (k) at training step Step (n), taken while task TrainTask was
// being trained (a "stream" row).
type StreamPoint struct {
	Step      int64
	TrainTask int
	EvalTask  int
	Acc       float64
}

// CurvePoint is one point Z_{t,b} of the learning curve: the accuracy on task
// Task after its Batch-th training batch (0-based), among the first β batches
// of the task (a "curve" row).
type CurvePoint struct {
	Task  int
	Batch int
	Acc   float64
}

// Diag is one recorded diagnostic (a "diag" row): a named number measured
// after task Task, passed through and averaged per name.
type Diag struct {
	Name  string
	Task  int
	Value float64
}

// Scenario is the continual-learning scenario of a run.
type Scenario string

// The scenarios of PROTOCOLS 4; ScenarioUnknown when the run does not say.
const (
	ScenarioUnknown  Scenario = ""
	ScenarioTaskIL   Scenario = "task-il"
	ScenarioClassIL  Scenario = "class-il"
	ScenarioDomainIL Scenario = "domain-il"
)

// ParseScenario reads a scenario as run metadata spells it. Case, surrounding
// blanks and "_" for "-" are forgiven ("Class-IL", "class_il"); an empty
// string is ScenarioUnknown; anything else is an error.
func ParseScenario(s string) (Scenario, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	switch Scenario(n) {
	case ScenarioUnknown, ScenarioTaskIL, ScenarioClassIL, ScenarioDomainIL:
		return Scenario(n), nil
	}
	return "", fmt.Errorf("scenario %q: want task-il, class-il or domain-il", s)
}

// Run is one recorded run of the contilab protocol: its identity and every
// record it holds. The slices may come in any order; Score indexes them and
// never depends on their order, except that diagnostics are reported in
// order of first appearance of their (sanitized) names.
type Run struct {
	// Key is the run key (field=value|… or anonymous:<key>).
	Key string
	// Meta is the run metadata rendered as strings.
	Meta map[string]string
	// Scenario is the run's scenario; ScenarioUnknown (""), when it is not
	// known, makes Score read Meta["scenario"] instead.
	Scenario Scenario

	Matrix  []MatrixEntry
	Initial []InitialEntry
	Joint   []JointEntry
	Stream  []StreamPoint
	Curve   []CurvePoint
	Diags   []Diag
}

// Bounds of the indices Score accepts; larger values are input errors. They
// keep 1 + index from overflowing and keep every step, and every difference
// of two steps, exactly representable in float64.
const (
	MaxIndex = 1<<31 - 1 // task and batch indices
	MaxStep  = 1 << 53   // stream steps
)
