"""One thin entry point per DVC stage: read params, call one job, write outputs atomically."""
