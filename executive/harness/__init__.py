"""The simulated robot and the service as processes on a leased loopback domain: what
``make demo``, the fault matrix, the soak, the benchmarks and the integration tests run.
"""
