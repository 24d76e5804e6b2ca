package controllerruntime

import "github.com/jobkit/jobkit/reconcile"

// JobType is reconcile.JobType, the Type of batch/v1 Jobs.
//
// Deprecated: use reconcile.JobType.
var JobType = reconcile.JobType
