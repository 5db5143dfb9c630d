"""What runs write and read back: crash-safe files, the run folder, its Parquet
tables, coverage, statistics and plots."""
