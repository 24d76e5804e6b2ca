package successpolicy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
)

func TestRuleErrorWithoutParseError(t *testing.T) {
	plain := &plainsp.RuleError{Rule: 3, Value: "abc", Err: errors.New("boom")}
	err := error(&ruleError{plain: plain})
	assert.Equal(t, `spec.successPolicy.rules[3].succeededIndexes "abc": boom`, err.Error())
	var re *plainsp.RuleError
	assert.True(t, errors.As(err, &re), "ruleError does not unwrap to *plainsp.RuleError")
	assert.Same(t, plain, re)
}
