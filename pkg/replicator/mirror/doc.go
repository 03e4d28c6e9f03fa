// Package mirror holds the replicator's pure decisions about one object: which of its fields a copy on
// another hub carries (Kinds), what the copy on a target hub should look like (Desired), and what to do with
// the target's current object (Decide) — create, update, delete, nothing, or report a conflict.
//
// A copy is marked as the replicator's by the label LabelReplicatedFrom (the name of the hub it was copied
// from) and the annotations AnnotationContentHash (a hash of the mirrored content at the last write) and
// AnnotationSourceResourceVersion (the source's resourceVersion at that write). Only marked objects are updated
// or deleted; anything else with a mirrored name is a foreign object and is left alone, except the one case
// where the source's object is itself a copy of the target's: then the target's object is the original the
// copy came from (the cluster moved away from that hub) and the replicator takes it over.
//
// Status, finalizers, ownerReferences, managedFields and the labels and annotations that hubs, agents or the
// replicator own (ReservedLabelPrefixes, ReservedAnnotationPrefixes) are never mirrored; on a target they are
// kept as they are.
package mirror
