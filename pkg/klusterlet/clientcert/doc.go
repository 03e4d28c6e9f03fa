// Package clientcert holds the identity and credential protocol of the klusterlet-failover agent: how the
// agent names itself to an Open Cluster Management (OCM) hub, how it loads a bootstrap kubeconfig, how it
// asks the hub for a client certificate (CertificateSigningRequest), how it decides whether the hub
// kubeconfig Secret it already has is usable, when it rotates the certificate, and how that Secret is
// mirrored to files for the other klusterlet components.
//
// The wire contract (design §4) is OCM's:
//
//   - Secret keys: "kubeconfig" (failoverv1alpha1.KubeconfigSecretKey), [TLSCertSecretKey], [TLSKeySecretKey], [ClusterNameSecretKey],
//     [AgentNameSecretKey], always written together in one Create/Update.
//   - CSR: generateName "<cluster>-", label [ClusterNameLabel], signer [SignerName], usages digital signature,
//     key encipherment and client auth, subject CN [CommonName] and O [Organizations]; a fresh ECDSA P-256 key
//     per CSR, held in memory until the certificate is issued.
//   - Rotation: a new CSR when less than 20–25 % of the certificate's lifetime remains ([RotationDeadline]).
//
// Pure protocol code (parsing, building, checking, deadlines) lives in plain functions with table tests; the
// two controllers ([ClientCertForHubController], [NewHubKubeconfigSecretMirrorController]) only orchestrate.
package clientcert
