package runplan

// DedupeForTest is deduplicate, for the table tests and benchmarks of the
// external test package.
var DedupeForTest = deduplicate

// DeduplicationForTest is deduplication, the answer of DedupeForTest.
type DeduplicationForTest = deduplication
