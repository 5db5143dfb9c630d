"""KRaft's protocol steps, one handler per Kafka method they model: the quorum's
role changes (``quorum_state``), elections, replication, the quorum-epoch RPCs,
snapshots and voter changes."""
