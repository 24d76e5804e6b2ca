package podfailurepolicy

// IsPlainLabelKeyForTest is isPlainLabelKey, for the fuzz target.
var IsPlainLabelKeyForTest = isPlainLabelKey

// ConditionTypeErrorsForTest is conditionTypeErrors, for the fuzz target.
var ConditionTypeErrorsForTest = conditionTypeErrors

// ConditionTypeErrorsSlowForTest is conditionTypeErrors without the fast path.
var ConditionTypeErrorsSlowForTest = labelKeyErrorsSlow
