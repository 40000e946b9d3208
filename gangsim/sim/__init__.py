"""The simulated cluster: event loop, object store, job model and the replay driver."""
