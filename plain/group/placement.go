package group

// Exclusive returns the exclusive placement of the children of role r, as
// JobSet resolves its annotations (alpha.jobset.sigs.k8s.io/exclusive-topology
// and alpha.jobset.sigs.k8s.io/node-selector): topology is the node label
// whose values are the domains, one child per domain ("" for no exclusive
// placement), the role's ExclusiveTopology when set, else the group's.
// nodeSelector says the children use the node-selector strategy (nodes
// labelled and tainted per child beforehand) rather than pod affinity: set
// on the role, or on a group whose own exclusive topology is set, and
// meaningful only with a topology.
func (s *Spec) Exclusive(r int) (topology string, nodeSelector bool) {
	role := &s.Roles[r]
	if s.ExclusiveTopology != "" {
		topology, nodeSelector = s.ExclusiveTopology, s.NodeSelectorStrategy
	}
	if role.ExclusiveTopology != "" {
		topology = role.ExclusiveTopology
	}
	nodeSelector = nodeSelector || role.NodeSelectorStrategy
	if topology == "" {
		return "", false
	}
	return topology, nodeSelector
}
