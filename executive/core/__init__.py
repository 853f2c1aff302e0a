"""The executive proper: the core tree and its mission slot, the tick loop, the safety
watchdog, and the assembly that opens the profile's robot. Robot-neutral: it reads the
``RobotSnapshot`` and calls the ports of ``executive.seam.ports``.
"""
