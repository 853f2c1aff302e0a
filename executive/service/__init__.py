"""The long-running service around the executive: ``atom-executive run``, its configuration,
the request server and its authentication, the status document, systemd notification, other
controllers on the domain, recovery after a crash, and the DDS client programs use.
"""
