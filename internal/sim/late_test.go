package sim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLateReplacementCaught replays the traces of the released-index stall with a
// controller whose read-back of a refused name fails, which gives the name up
// only after UncertainCreationTimeout as every controller did before issue 20:
// late-replacement breaks. Since issue 37 the controller that releases a pod knows
// its name is taken and no creation is refused, so in the broken runs the pod is
// released by someone else (relabelOrphans): the controller learns the name is
// taken only from the refused creation. The controller as it is runs the traces
// clean (also in TestRegressions).
func TestLateReplacementCaught(t *testing.T) {
	for _, name := range []string{"released-active-replacement-late", "released-index-name-taken"} {
		t.Run(name, func(t *testing.T) { lateReplacementCaught(t, name) })
	}
}

func lateReplacementCaught(t *testing.T, name string) {
	tr, err := ReadTrace(filepath.Join("testdata", "regressions", name+".json"))
	require.NoError(t, err)
	for _, broken := range []bool{false, true} {
		w, err := newWorld(tr)
		require.NoError(t, err)
		w.readBackFails, w.relabelOrphans = broken, broken
		r, err := w.newReconciler()
		require.NoError(t, err)
		w.use(r)
		for _, a := range tr.Actions {
			w.do(a)
		}
		w.complete()
		res := w.result()
		if !broken {
			require.Equal(t, 1, res.Released, "the trace releases one pod")
			require.True(t, res.OK(), "%v", res.Violations)
			require.True(t, res.Finished, res.Summary())
			continue
		}
		require.False(t, res.OK(), "the broken controller ran clean: %s", res.Summary())
		require.Equal(t, InvLateReplacement, res.Violations[0].Invariant, "%v", res.Violations[0])
		t.Logf("broken controller: %v", res.Violations[0])
	}
}
