"""One line on what each safety invariant means, for reports and replays (the names
are kraftwalk.config.INVARIANTS, the kernels' checkers.INVARIANT_NAMES)."""
MEANING = {
    "ElectionSafety": "at most one leader per epoch, over the whole history",
    "VoteUniqueness": "a voter grants at most one vote per epoch",
    "LeaderAppendOnly": "while a node leads an epoch its log only grows, even across a crash",
    "EpochMonotonic": "a node's epoch never decreases",
    "LogMatching": "two logs with the same epoch at an offset hold identical prefixes up to it",
    "LeaderCompleteness": "every entry committed in an earlier epoch is in every later "
                          "leader's log",
    "StateMachineSafety": "a voter's log below its high watermark is a prefix of the "
                          "committed log",
    "HighWatermarkValid": "a node's high watermark is at most its log end offset",
    "HighWatermarkMonotonic": "the high watermark of the highest-epoch leader never decreases",
    "MajorityReachedHighWatermark": "a majority of voters hold every entry below a leader's "
                                    "high watermark",
    "CommitCurrentEpoch": "a leader's high watermark covers an entry of its own epoch",
    "ObserverConsistency": "an observer's log below its high watermark is a prefix of the "
                           "committed log",
    # with snapshots on (KIP-630)
    "SnapshotMonotonic": "a node's latest snapshot never moves back, crashes included",
    "SnapshotConsistent": "a snapshot ending at offset N is the committed log up to N, epoch "
                          "included",
    "SnapshotAtLogStart": "a running node's log starts at a snapshot it holds",
    "LeaderNeverLoadsSnapshot": "only a follower installs a snapshot downloaded from the "
                                "leader",
    # with voter changes on (KIP-853)
    "AtMostOneUncommittedVoterSet": "past the committed log, a node's log holds at most one "
                                    "VotersRecord",
    "QuorumOverlap": "the voters that elect a leader, or commit an entry, form majorities "
                     "that meet those of the voter set that committed the entry before",
    # liveness ("eventually") properties of timed walks (kernels.liveness)
    "HealedClusterRecovers": "once every fault has healed, a leader known to a majority of "
                             "voters and a new commit come within the liveness bound",
    "CutOffLeaderResigns": "a leader that no majority of voters can reach stops leading "
                           "within check quorum (1.5 x fetch timeout) plus a slack",
    "PreVoteIsolatedNeverCandidate": "with pre-vote, a voter that has not reached a majority "
                                     "since it became Prospective never becomes Candidate",
    "HealthyLeaderKept": "while no fault has happened, no follower of a leader known to every "
                         "voter times out",
}
