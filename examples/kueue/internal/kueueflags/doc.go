// Package kueueflags holds the flags that the Kueue-enabled example commands
// (trainingjob-controller and jobset-controller of module
// github.com/jobkit/jobkit/examples/kueue) add to the examples' own: --kueue
// turns the Kueue integration on (kueue.Setup for the command's kind), and
// --kueue-config names the Configuration file the cluster's Kueue runs with,
// whose queueing settings the integration then follows.
package kueueflags
