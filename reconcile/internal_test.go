package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestCaughtUp(t *testing.T) {
	tests := []struct {
		name    string
		w       lastWrite
		version string
		want    bool
	}{
		{name: "numeric: older", w: lastWrite{version: "120", older: []string{"100"}}, version: "100", want: false},
		{name: "numeric: between", w: lastWrite{version: "120", older: []string{"100"}}, version: "119", want: false},
		{name: "numeric: equal", w: lastWrite{version: "120", older: []string{"100"}}, version: "120", want: true},
		{name: "numeric: newer", w: lastWrite{version: "120", older: []string{"100"}}, version: "9000", want: true},
		{name: "numeric compare, not lexical", w: lastWrite{version: "10", older: []string{"9"}}, version: "9", want: false},
		{name: "opaque: a version seen before the write", w: lastWrite{version: "b", older: []string{"a"}}, version: "a", want: false},
		{name: "opaque: an intermediate version", w: lastWrite{version: "c", older: []string{"a", "b"}}, version: "b", want: false},
		{name: "opaque: the written version", w: lastWrite{version: "c", older: []string{"a", "b"}}, version: "c", want: true},
		{name: "opaque: an unknown version", w: lastWrite{version: "c", older: []string{"a"}}, version: "zz", want: true},
		{name: "mixed: falls back to equality", w: lastWrite{version: "c", older: []string{"7"}}, version: "7", want: false},
		{name: "empty cached version", w: lastWrite{version: "5", older: []string{"4"}}, version: "", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, caughtUp(tc.w, tc.version), "caughtUp(%+v, %q)", tc.w, tc.version)
		})
	}
}

func TestRecordWrite(t *testing.T) {
	jobAt := func(rv string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	r := &Reconciler{writes: map[string]lastWrite{}, uids: map[string]types.UID{}}
	b, c, y := jobAt("b"), jobAt("c"), jobAt("y")
	r.recordWrite("k", "a", b)
	r.recordWrite("k", "b", c) // a second write in the same sync
	assert.Equal(t, lastWrite{version: "c", older: []string{"a", "b"}, job: c}, r.writes["k"])
	for _, v := range []string{"a", "b"} {
		isStale, written := r.stale("k", v)
		assert.True(t, isStale, "stale(k, %q)", v)
		assert.Same(t, c, written, "the Job of the last write, for a sync from a stale cache")
	}
	isStale, written := r.stale("k", "c")
	assert.False(t, isStale)
	assert.Nil(t, written)
	_, ok := r.writes["k"]
	assert.False(t, ok, "forgotten once caught up")
	r.recordWrite("k", "x", y) // a new sequence
	assert.Equal(t, lastWrite{version: "y", older: []string{"x"}, job: y}, r.writes["k"])
	r.recordWrite("k", "y", y) // a write that changed nothing
	assert.Equal(t, lastWrite{version: "y", older: []string{"x"}, job: y}, r.writes["k"])
	r.recordWrite("j", "y", y)
	_, ok = r.writes["j"]
	assert.False(t, ok, "nothing to wait for")
}
