package successpolicy_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
	"github.com/jobkit/jobkit/successpolicy"
)

// referenceMatch restates the matching rules over plain sets, index by index, as an
// independent model of Compiled.Match. It is only fit for small completions.
func referenceMatch(p *batchv1.SuccessPolicy, completions int, succeeded plainindexes.Intervals) plainsp.Result {
	miss := plainsp.Result{RuleIndex: -1}
	if p == nil {
		return miss
	}
	done := sets.New[int]()
	for x := range succeeded.All() {
		if x >= completions {
			break
		}
		done.Insert(x)
	}
	if done.Len() == 0 {
		return miss
	}
	for i, r := range p.Rules {
		ok := false
		switch {
		case r.SucceededIndexes != nil:
			listed, _ := plainindexes.Parse(*r.SucceededIndexes, max(completions, 0))
			want := sets.New[int]()
			for x := range listed.All() {
				want.Insert(x)
			}
			if want.Len() == 0 {
				continue
			}
			hit := want.Intersection(done).Len()
			ok = hit == want.Len() || (r.SucceededCount != nil && hit >= int(*r.SucceededCount))
		case r.SucceededCount != nil:
			ok = done.Len() >= int(*r.SucceededCount)
		}
		if ok {
			return plainsp.Result{Matched: true, RuleIndex: i, Reason: batchv1.JobReasonSuccessPolicy, Message: "Matched rules at index " + strconv.Itoa(i)}
		}
	}
	return miss
}

// FuzzCompile checks that any succeededIndexes string, count and completions compile
// without panicking, and that Compiled.Match, Match and the reference model agree.
func FuzzCompile(f *testing.F) {
	f.Add("1,3-5", "0-5", int32(2), uint16(10), uint8(3))
	f.Add("0-9", "0,2,4,6,8", int32(5), uint16(10), uint8(3))
	f.Add("3,1,1-2", "1-3", int32(-1), uint16(4), uint8(1))
	f.Add("1-2-3,,x,+4,00000000005", "5", int32(0), uint16(6), uint8(2))
	f.Add("", "0", int32(0), uint16(1), uint8(7))
	f.Add("7-9", "0-20", int32(1), uint16(5), uint8(5))
	f.Fuzz(func(t *testing.T, listed, done string, count int32, completions uint16, flags uint8) {
		// Keep the reference model cheap.
		comp := int(completions % 2048)
		r0 := batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(listed)}
		if flags&1 != 0 {
			r0.SucceededCount = ptr.To(count)
		}
		rules := []batchv1.SuccessPolicyRule{r0}
		if flags&2 != 0 {
			rules = append(rules, batchv1.SuccessPolicyRule{SucceededCount: ptr.To(count)})
		}
		if flags&4 != 0 {
			rules = append([]batchv1.SuccessPolicyRule{{}}, rules...)
		}
		p := &batchv1.SuccessPolicy{Rules: rules}
		succeeded, _ := plainindexes.Parse(done, plainindexes.NoLimit)

		c, err := successpolicy.Compile(p, comp)
		if c == nil {
			t.Fatalf("Compile(%q, %d) = nil, %v", listed, comp, err)
		}
		got := c.Match(succeeded)
		if plain := match(p, comp, succeeded); got != plain {
			t.Fatalf("Compiled.Match = %+v, Match = %+v", got, plain)
		}
		if want := referenceMatch(p, comp, succeeded); got != want {
			t.Fatalf("Compiled.Match(listed %q, count %d, completions %d, succeeded %q) (-want +got):\n%s",
				listed, count, comp, done, cmp.Diff(want, got))
		}
	})
}

// FuzzValidate checks that Validate never panics on any single-rule policy and that a
// policy it accepts compiles without error and matches once every index succeeded.
func FuzzValidate(f *testing.F) {
	f.Add("1,3-5", int32(2), int32(10), uint8(3))
	f.Add("", int32(0), int32(1), uint8(3))
	f.Add("3-3", int32(1), int32(5), uint8(1))
	f.Add("+1,00000000002,1-2-3", int32(-1), int32(5), uint8(3))
	f.Add("0-2147483646", int32(2147483647), int32(2147483647), uint8(3))
	f.Add("0", int32(1), int32(-5), uint8(11))
	f.Fuzz(func(t *testing.T, listed string, count, completions int32, flags uint8) {
		r := batchv1.SuccessPolicyRule{}
		if flags&1 != 0 {
			r.SucceededIndexes = ptr.To(listed)
		}
		if flags&2 != 0 {
			r.SucceededCount = ptr.To(count)
		}
		spec := &batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			SuccessPolicy:  &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{r}},
		}
		if flags&4 == 0 {
			spec.Completions = ptr.To(completions)
		}
		if flags&8 != 0 {
			spec.Parallelism = ptr.To[int32](1)
		}
		if flags&16 != 0 {
			spec.CompletionMode = nil
		}
		errs := successpolicy.Validate(spec, nil)
		if len(errs) > 0 {
			return
		}
		comp := 1
		if spec.Completions != nil {
			comp = int(*spec.Completions)
		}
		c, err := successpolicy.Compile(spec.SuccessPolicy, comp)
		if err != nil {
			t.Fatalf("Validate accepted %+v with completions %d, but Compile() error = %v", r, comp, err)
		}
		if comp <= 0 || (r.SucceededIndexes != nil && *r.SucceededIndexes == "") {
			return
		}
		all := plainindexes.Intervals{{First: 0, Last: comp - 1}}
		if got := c.Match(all); !got.Matched {
			t.Fatalf("valid rule %+v with completions %d does not match when every index succeeded: %+v", r, comp, got)
		}
	})
}
