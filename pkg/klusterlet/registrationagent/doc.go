// Package registrationagent is the drop-in for OCM's registration agent: the command line of
// `registration agent` (open-cluster-management.io/ocm v1.2.0) as the klusterlet operator v1.2.0 renders it in
// its klusterlet-registration-deployment.yaml template, mapped onto the failover agent's options.
//
// Options embeds klusterlet.FailoverAgentOptions and adds OCM's names and flags: --spoke-cluster-name and
// --agent-id (OCM's names for --cluster-name and --agent-name), --hub-kubeconfig, --feature-gates (OCM's
// registration feature gates, of which MultipleHubs and AddonManagement take effect), --registration-auth and
// the awsirsa, grpc and add-on authentication flags. What this agent cannot honour is refused at start by
// ValidateOCMFlags with a message naming the flag; what OCM itself ignores is ignored here too
// (CompleteOCMFlags). A flag it does not know at all, as a newer operator may render, is ignored with a warning
// or, when it may change how the agent registers, refused (ClassifyUnknownFlags). The command is built in pkg/cmd; the agent it runs is the failover agent's
// (FailoverAgentOptions.RunFailoverAgent).
package registrationagent
