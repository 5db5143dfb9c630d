"""The run machinery: chunks of walks on cores or a cluster, saved as they finish,
resumed after a stop; and the jobs built on it (swarm, sweep, elect, hunt, bench)."""
