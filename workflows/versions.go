package workflows

// The workflow.GetVersion changes of the bake workflows, oldest first. Each
// keeps the histories recorded before it replaying on the path they took
// (docs/ARCHITECTURE.md, "Safe upgrades"); every run of a workflow asks for
// its changes once, at its start, in this order.

// fleetChange is the change that introduced the event budget
// (continue-as-new) and slices whose cancellation the split waits for:
// histories recorded before it ran every slice in one run and closed as
// soon as it asked its slices to stop.
const fleetChange = "split-fleet"

// drainChange is the change after which a cancelled bake closes only once
// its splits have closed, and a cancelled split only once its merge has
// stopped: a restart of the bake starts the same split workflow IDs and
// merges at the same keys, which must not still be in use by the cancelled
// run (ChildWorkflowExecutionAlreadyStarted). Histories recorded before it
// closed as soon as they had asked their children and activities to stop.
const drainChange = "cancel-drains"

// stopsChange is the change after which a slice that its worker stopped
// gracefully (ErrWorkerStopping: spot preemption, a rolling upgrade) comes
// back to the split, which starts it again at once instead of letting
// Temporal retry it: a retry spends one of policy.slice-max-attempts, which
// guard against poison slices, and a long slice on a preemptible fleet could
// be stopped more often than that while making progress each time. Only
// stops that saved nothing spend an attempt. Histories recorded before it
// retried stops like any failure.
const stopsChange = "slice-stops"

// nameChange is the change after which a protocol-4.0 split runs NameSplit
// on a GPU worker before its first slice, which writes the split's salted
// identity blocks once: its slices then read only their own blocks.
// Histories recorded before it have no such activity: the first wave of
// their slices each derived the whole split's names (which such slices
// still do when they find no blocks).
const nameChange = "name-split"

// followChange is the change after which a bake merges each split's
// slices beside the split, as they are committed (MergeSplitFollowing),
// instead of the split merging them once the last is in: the release then
// waits only for the last slice's own rows to be merged. Histories
// recorded before it start no merge beside their splits, whose runs merge
// as they did.
const followChange = "merge-follows"
