package fetch_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: a closed renderer
// leaves nothing of its browser, its tabs or its interception behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
