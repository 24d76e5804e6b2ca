package envtesting

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGo(t *testing.T) {
	tests := []struct {
		name       string
		ret        error
		wantErrors []string
	}{
		{name: "returns nil at cancellation"},
		{name: "returns an error", ret: errors.New("lost the lease"), wantErrors: []string{"run() = lost the lease after cancellation, want nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			var running, cancelled atomic.Bool
			Go(r, "run()", func(ctx context.Context) error {
				running.Store(true)
				<-ctx.Done()
				cancelled.Store(true)
				return tt.ret
			})
			require.Eventually(t, running.Load, 10*time.Second, time.Millisecond, "fn did not start")
			assert.False(t, cancelled.Load(), "fn's context was cancelled before the cleanup")
			require.Len(t, r.cleanups, 1)
			r.cleanup()
			assert.True(t, cancelled.Load(), "the cleanup returned before fn did")
			assert.Equal(t, tt.wantErrors, r.errors)
		})
	}
}
