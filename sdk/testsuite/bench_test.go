package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/sdk/testsuite"
)

// BenchmarkFanout1000 runs a workflow of 1 000 mocked activities, one
// after the other, and a 30-day timer: each iteration is one whole
// workflow (time skipping makes the 30 days free).
func BenchmarkFanout1000(b *testing.B) {
	var ts testsuite.WorkflowTestSuite
	for b.Loop() {
		env := ts.NewTestWorkflowEnvironment()
		env.OnActivity(Step, mock.Anything, mock.Anything).Return(1, nil)
		env.ExecuteWorkflow(Fanout, 1000)
		var sum int
		if err := env.GetWorkflowResult(&sum); err != nil || sum != 1000 {
			b.Fatalf("result %d, %v", sum, err)
		}
	}
}
