"""One thin entry point per DVC stage: read params, call one job, write outputs atomically.

A stage whose games run on a pool of workers (init's teacher, selfplay, gate, evaluate) imports its job and torch inside
`main`: each spawned worker runs the stage module's top again, and a worker that never loads torch
starts 1.1-1.9 s sooner (`AgentSpec.for_pool`)."""
