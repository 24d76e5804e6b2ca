package roles

import "github.com/jobkit/jobkit/groups/ownedpods"

// Workload is ownedpods.Workload.
//
// Deprecated: use ownedpods.Workload.
type Workload = ownedpods.Workload

// Role is ownedpods.Role.
//
// Deprecated: use ownedpods.Role.
type Role = ownedpods.Role

// Status is ownedpods.Status.
//
// Deprecated: use ownedpods.Status.
type Status = ownedpods.Status

// RoleStatus is ownedpods.RoleStatus.
//
// Deprecated: use ownedpods.RoleStatus.
type RoleStatus = ownedpods.RoleStatus

// Input is ownedpods.Input.
//
// Deprecated: use ownedpods.Input.
type Input = ownedpods.Input

// Plan is ownedpods.Plan.
//
// Deprecated: use ownedpods.Plan.
type Plan = ownedpods.Plan

// StatusWriter is ownedpods.StatusWriter.
//
// Deprecated: use ownedpods.StatusWriter.
type StatusWriter = ownedpods.StatusWriter

// Compute is ownedpods.Compute.
//
// Deprecated: use ownedpods.Compute.
func Compute(in Input) (*Plan, error) { return ownedpods.Compute(in) }
