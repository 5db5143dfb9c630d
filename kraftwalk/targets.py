"""The names of the reachability targets, importable without loading the kernels
(the CLI checks --require and --witness before any Numba code loads). The kernels'
layout.TARGET_NAMES is the source; a test keeps the two equal."""
TARGET_NAMES = (
    "LeaderElected", "EntryCommitted", "FollowerTruncated", "CheckQuorumResigned",
    "GracefulHandover", "PreVoteRefused", "Disruption", "UnflushedTailLost",
    "ElectedWithCommittedOnMinority", "EpochBoundHit", "LogCapacityHit", "SnapshotLoaded",
    "RestartedFromSnapshot", "VoterAdded", "VoterRemoved", "RemovedLeaderResigned",
    "DiskLost", "WipedVoterReadded",
)
