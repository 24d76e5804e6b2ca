package podfailurepolicy

// IsPlainLabelKeyForTest is isPlainLabelKey, for the fuzz target.
var IsPlainLabelKeyForTest = isPlainLabelKey

// ConditionTypeErrorsSlowForTest is ConditionTypeErrors without the fast path.
var ConditionTypeErrorsSlowForTest = labelKeyErrorsSlow
