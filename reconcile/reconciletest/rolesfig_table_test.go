package reconciletest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestRolesVsChildJobs(t *testing.T) {
	const L = 10 * time.Millisecond
	for _, lag := range []time.Duration{0, 3 * L} {
		for _, run := range []func(context.Context, time.Duration, time.Duration) (figResult, error){runRolesFigure, runJobSetFigure} {
			synctest.Test(t, func(t *testing.T) {
				res, err := run(context.Background(), L, lag)
				t.Logf("%+v err=%v", res, err)
			})
		}
	}
}
