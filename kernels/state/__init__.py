"""A walk's state: the packed layout (one document for every array), the logs,
the in-flight messages, the voter sets, the timers, the random stream and the
coverage bitmap. Nothing here takes a protocol step."""
